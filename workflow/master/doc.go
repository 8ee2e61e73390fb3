// Package master is for master programs: programs that create work units,
// wait for their results and decide what to submit next (parameter sweeps,
// adaptive sampling, evolutionary searches). It follows the model of the
// DC-API's master side, on top of package client and the server's events
// feed (GET api/v1/events).
//
// A work unit here is an rboinc chain: one or more steps (one by default)
// of a queue, with input files by parameter, named by the master. Its tag
// is the chain's group, so a tag is a valid group name and work units of
// different tags may share a name. The queue's template fixes the
// application's command line: rboinc has no per-work-unit arguments, so
// what differs between work units travels in input files (the langevin
// queue's conf_file, for one).
//
// Events come from the server in the order they happened. A Result event
// carries the outputs of one finished step, downloaded, MD5-verified and
// made durable under the master's result directory
// (<dir>/<tag>/<name>/<file>) before the handler sees it. A Failure event
// carries the server's reason in words. Other changes (suspended, resumed,
// cancelled, finished, retried) arrive as State events.
//
// Acknowledgement is durable: an event whose handler returned nil is
// acknowledged, and Process writes its acknowledgements to the master's
// state file (a temporary file renamed into place) every 100 events or
// 100 ms and at the end of each batch, that last write synced; Ack writes
// at once. The master's own data (SetData) is written with them. A master
// restarted after a crash continues after the last acknowledgement
// written: an acknowledged event is never delivered again; an event whose
// handler ran but whose acknowledgement was not written yet is delivered
// again. Keep what the handler decides in SetData: its effect and the
// acknowledgement are then one atomic write, and a crash replays the
// events since from the state they left. The server's copies of result
// files are dropped only after the events that carried them are
// acknowledged.
//
// A Master is for one goroutine: events are handled one at a time, in
// order. Its work units are those of its tags (Options.Tag, and any other
// tag it submits to): it is given the events of those only, and the
// server hands and drops their results to it alone. The user's other
// chains (rboinc-submit's, taken by rboinc-retrieve; an HTCondor batch's,
// taken by the GAHP; another master's tag) are not its to see, take or
// count, and a tag holding such chains is refused to it. Two masters that
// share a tag share its work units: give each master a tag of its own.
//
// # From the DC-API
//
//	DC_initMaster             Connect (URL, token, Options: CA file as -cacert, result directory, state file)
//	DC_createWU               NewWU (queue, name, inputs by parameter); Tag and Steps fields
//	DC_addWUInput             WU.Inputs[parameter] = path of a local file
//	DC_addWUOutput            the queue's result template names the outputs
//	DC_setWUPriority          WU.Options.Priority
//	DC_setWUBatch             WU.Options.Batch
//	DC_submitWU               Master.Submit (one or many work units: one request per queue, tag and options)
//	DC_getWUState             WU.State after Submit; State events; Master.Counts
//	DC_getWUId                WU.ID (the BOINC work unit of the first step)
//	DC_getWUTag               WU.Tag
//	DC_processMasterEvents    Master.Process (handler called for each event, acknowledged when it returns nil)
//	DC_waitMasterEvent        Master.Wait, then Master.Ack
//	DC_waitWUEvent            Master.Wait, looking at Event.Tag and Event.Name (no wait for one work unit)
//	DC_setResultCb ...        the handler given to Process (DC_setMasterCb, DC_setSubresultCb alike)
//	DC_destroyMasterEvent     nothing to do: Ack, or let the next Process deliver it again
//	DC_MASTER_RESULT          EventResult (Event.Result: step, output files)
//	DC_MASTER_SUBRESULT       EventResult of each step; after the last, a State event StateFinished
//	DC_MASTER_MESSAGE         no counterpart: BOINC applications do not message their master
//	DC_getResultOutput        Result.Output(index) or Result.Alias(suffix)
//	DC_suspendWU              Master.Suspend (no further steps; the running one finishes)
//	DC_resumeWU               Master.Resume
//	DC_cancelWU, DC_destroyWU Master.Cancel (its work in BOINC cancelled)
//	DC_getWUNumber            Master.Count, Master.Counts (for throttling)
//	DC_WU_RUNNING ...         StateRunning, StateFinished, StateSuspended, StateAborted
//
// DC_serializeWU and DC_deserializeWU have no counterpart: a work unit is
// found again by its tag and name, which the master chooses.
package master
