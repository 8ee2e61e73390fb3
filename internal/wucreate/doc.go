// Package wucreate is BOINC's create_work job processing: from the
// project, the app, the templates, a job's options and its input files to
// the workunit row, with its xml_doc, and the assignment row of targeted
// work. The stand-in's create_work program and rboinc's native creation
// (which inserts many rows per statement) both use it, so that the two
// write the same rows.
package wucreate
