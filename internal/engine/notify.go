package engine

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rboinc/rboinc/internal/dialguard"
	"github.com/rboinc/rboinc/internal/mail"
	"github.com/rboinc/rboinc/internal/notifytarget"
	"github.com/rboinc/rboinc/internal/store"
)

// Notification delivery: events are fanned out into the state database's
// outbox (store.FanOut) and sent from there, so a restart loses none and
// a target that fails is retried with a back-off while the others go on.
// A claim takes a target's next notifyBatch deliveries, sent one after
// another in event order and recorded together: two write transactions a
// batch, not two a delivery, so a target that gets every event keeps up.
// Targets are sent to side by side, each one's batch one call at a time,
// at most notifyParallel targets at once, of one user at most
// notifyPerUser, taken from the users in turn: one user's dead or slow
// targets hold up only themselves, never another user's.
const (
	notifyFanOut   = 1000 // events fanned out per transaction
	notifyBatch    = 16   // deliveries of one target per claim
	notifyParallel = 64   // targets (so calls) in flight at once
	notifyPerUser  = 4    // of one user
	notifyMaxRetry = time.Hour
	// NotifyGiveUp is how long a delivery is retried before it is dropped.
	NotifyGiveUp = 72 * time.Hour
)

// notifyLease is how long a claimed batch is set aside (seconds), and
// notifyTimeout bounds one webhook call or e-mail. A batch starts no call
// later than 3 notifyTimeout before its claim ends: the call is over
// before it, and its outcome recorded, so no other notifier sends the
// target's events meanwhile. Tests shorten both.
var (
	notifyLease   int64 = 90
	notifyTimeout       = 15 * time.Second
)

// notifyFirstRetry is the wait after a first failed delivery, doubling
// with each further one (tests shorten it).
var notifyFirstRetry = 5 * time.Second

// SignatureHeader carries a webhook body's HMAC-SHA256 under the user's
// secret, as "sha256=<hex>".
const SignatureHeader = notifytarget.SignatureHeader

// Sign is the SignatureHeader value of body under secret.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// RunNotifier fans events out and delivers them until ctx ends.
func (e *Engine) RunNotifier(ctx context.Context, poll time.Duration) {
	s := newSender(e)
	defer s.wg.Wait()
	var streak failStreak
	for {
		busy, err := s.pass(ctx)
		if ctx.Err() != nil {
			return
		}
		wait := poll
		if err != nil {
			wait = streak.fail(e.Log, "sending notifications; trying again shortly", err, busyWait(poll))
		} else {
			streak.ok(e.Log, "sending notifications")
			if busy {
				continue
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-s.ended: // a slot is free: take what is due
		case <-time.After(wait):
		}
	}
}

// NotifyPass fans out the events that came and makes the deliveries that
// are due, once, waiting for them; busy says more may be waiting already:
// the fan-out was full, or a delivery was made and its target's next event
// (a target gets one at a time) may be due now.
func (e *Engine) NotifyPass(ctx context.Context) (busy bool, err error) {
	s := newSender(e)
	busy, err = s.pass(ctx)
	s.wg.Wait()
	return busy || s.started > 0, err
}

// sender runs deliveries, counting those in flight, in all and per user.
type sender struct {
	e       *Engine
	mu      sync.Mutex
	flying  int
	byUser  map[int64]int
	ids     map[int64]bool // the deliveries in flight
	wg      sync.WaitGroup
	ended   chan struct{} // a value when a delivery ends
	started int           // deliveries started, in all
}

func newSender(e *Engine) *sender {
	return &sender{e: e, byUser: map[int64]int{}, ids: map[int64]bool{}, ended: make(chan struct{}, 1)}
}

// pass fans out new events and starts the batches due that fit in the
// free slots, without waiting for them.
func (s *sender) pass(ctx context.Context) (busy bool, err error) {
	n, err := s.e.db.FanOut(ctx, notifyFanOut)
	if err != nil {
		return false, fmt.Errorf("queueing events for notification: %w", err)
	}
	s.mu.Lock()
	free := notifyParallel - s.flying
	inFlight, ids := maps.Clone(s.byUser), maps.Clone(s.ids)
	s.mu.Unlock()
	if free <= 0 {
		return n == notifyFanOut, nil
	}
	at := time.Now().Unix()
	ds, err := s.e.db.ClaimDeliveries(ctx, store.Claim{At: at, Lease: notifyLease, Limit: free, Batch: notifyBatch,
		PerUser: notifyPerUser, Busy: inFlight, Flying: ids})
	if err != nil {
		return false, fmt.Errorf("taking due notifications: %w", err)
	}
	// The claim's end as the other notifiers read it: at + lease.
	end := time.Unix(at+notifyLease, 0)
	for len(ds) > 0 {
		k := 1
		for k < len(ds) && ds[k].Target.ID == ds[0].Target.ID {
			k++
		}
		batch := ds[:k:k]
		ds = ds[k:]
		uid := batch[0].Target.UserID
		s.mu.Lock()
		s.flying++
		s.started += len(batch)
		s.byUser[uid]++
		for _, d := range batch {
			s.ids[d.ID] = true
		}
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.e.deliverBatch(ctx, batch, end)
			s.mu.Lock()
			s.flying--
			for _, d := range batch {
				delete(s.ids, d.ID)
			}
			if s.byUser[uid]--; s.byUser[uid] == 0 {
				delete(s.byUser, uid)
			}
			s.mu.Unlock()
			select {
			case s.ended <- struct{}{}:
			default:
			}
		}()
	}
	return n == notifyFanOut, nil
}

// deliverBatch sends one target's claimed deliveries one after another in
// event order until one fails, the claim nears its end (claimEnd), ctx
// ends or the next is no longer this notifier's (its target removed),
// and records the outcome of all in one transaction: those sent are done,
// the first that failed waits for its retry, the rest are due again at
// once, in their order, for the next claim.
func (e *Engine) deliverBatch(ctx context.Context, batch []store.Delivery, claimEnd time.Time) {
	// A call in flight finishes (within notifyTimeout) when the notifier
	// is stopped: cut short, the receiver may have the event already and
	// would get it again from the next notifier; the outcome is recorded
	// even when ctx ended meanwhile.
	bg := context.WithoutCancel(ctx)
	lastStart := claimEnd.Add(-3 * notifyTimeout)
	var o store.Outcome
	for i, d := range batch {
		if (i > 0 && ctx.Err() != nil) || time.Now().After(lastStart) {
			o.Rest = deliveryIDs(batch[i:])
			break
		}
		log := e.Log.With("user_id", d.Target.UserID, "target", d.Target.Address, "event", d.EventID, "attempt", d.Attempts+1)
		if i > 0 {
			// The target may have been removed meanwhile (its address is
			// no longer the user's to be sent to), or the claim taken by
			// another notifier: no further call then.
			if ok, err := e.db.StillClaimed(bg, d.ID); err != nil || !ok {
				if err != nil {
					log.Warn("cannot tell whether a batch's next notification is still this notifier's; handing the rest back", "err", err)
				}
				o.Rest = deliveryIDs(batch[i:])
				break
			}
		}
		cctx, cancel := context.WithDeadline(bg, claimEnd.Add(-2*notifyTimeout))
		err := e.deliver(cctx, d, log)
		cancel()
		if err == nil {
			o.Done = append(o.Done, d.ID)
			continue
		}
		if time.Since(time.Unix(d.Created, 0)) > NotifyGiveUp {
			log.Error("notification dropped: its target failed for too long", "err", err, "failing_for", NotifyGiveUp)
			o.Done = append(o.Done, d.ID)
			continue
		}
		wait := notifyFirstRetry << min(d.Attempts, 20)
		wait = min(wait, notifyMaxRetry)
		level := slog.LevelWarn
		if errors.Is(err, errNoSecret) || dialguard.IsRefused(err) {
			level = slog.LevelError // for the administrator: it will not heal by itself
		}
		log.Log(bg, level, "notification not delivered; will try again", "err", err, "retry_in", wait, "held_back", len(batch)-i-1)
		o.Failed, o.NextTry, o.Reason = d.ID, time.Now().Add(wait).Unix(), err.Error()
		o.Rest = deliveryIDs(batch[i+1:])
		break
	}
	e.recordOutcome(ctx, o, batch, claimEnd)
}

func deliveryIDs(ds []store.Delivery) []int64 {
	ids := make([]int64, len(ds))
	for i, d := range ds {
		ids[i] = d.ID
	}
	return ids
}

// deliver makes one delivery: nil when it reached its target, or was
// dropped for good (an e-mail address nobody confirmed).
func (e *Engine) deliver(ctx context.Context, d store.Delivery, log *slog.Logger) error {
	switch d.Target.Kind {
	case store.NotifyWebhook:
		client, _ := e.notifyHTTP()
		return postWebhook(ctx, client, d)
	case store.NotifyEmail:
		ok, err := e.db.EmailConfirmed(ctx, d.Target.UserID, d.Target.Address)
		if err != nil {
			return err
		}
		if !ok {
			// Registered before addresses were confirmed: never sent.
			log.Error("notification dropped: its e-mail address was never confirmed by its user nor registered by the administrator")
			return nil
		}
		return e.sendEventMail(ctx, d)
	default:
		return fmt.Errorf("unknown notification kind %q", d.Target.Kind)
	}
}

// notifyRecordFor is how long past its claim's end a running notifier
// keeps trying to record a batch's outcome.
const notifyRecordFor = 15 * time.Minute

// recordOutcome records a batch's outcome, trying again while the state
// database is away (a MariaDB restart) or its write lock is held long (a
// purge): once recorded, nobody sends its deliveries again. A running
// notifier tries on past its claim's end (for notifyRecordFor): whoever
// would take the batch then waits for the same database, and this process
// takes none of it again meanwhile (Claim.Flying); a stopping one (ctx
// ended) gives up when the claim ends. Those sent that another notifier
// took once the claim ran out, or that were never recorded, may reach the
// receiver a second time (the event's id tells it so): each is logged
// with its event, for whoever counts the repeats.
func (e *Engine) recordOutcome(ctx context.Context, o store.Outcome, batch []store.Delivery, claimEnd time.Time) {
	bg := context.WithoutCancel(ctx)
	end := claimEnd.Add(-notifyTimeout / 3)
	late := false
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, 2*time.Second) {
		taken, err := e.db.RecordOutcome(bg, o)
		if err == nil {
			switch {
			case len(taken) == 0:
			case time.Now().After(claimEnd):
				e.Log.Warn(NotifyTakenMessage, "events", eventIDs(batch, taken))
			default:
				e.Log.Error("notifications sent were taken by another notifier while this one's claim held (they may be sent twice)", "events", eventIDs(batch, taken))
			}
			return
		}
		giveUp := end
		if ctx.Err() == nil {
			giveUp = claimEnd.Add(notifyRecordFor)
		}
		if time.Now().Add(wait).After(giveUp) {
			e.Log.Error(NotifyUnrecordedMessage, "err", err, "sent", len(o.Done), "events", eventIDs(batch, o.Done))
			return
		}
		if !late && time.Now().After(end) {
			late = true
			e.Log.Warn("the outcome of notifications sent is not recorded yet and their claim ran out: trying on", "err", err, "sent", len(o.Done))
		}
		time.Sleep(wait)
	}
}

// The messages that name, as events=ID,ID,..., the deliveries a receiver
// may get again: sent, and taken by another notifier once their claim ran
// out, or never recorded (rbsoak's webhook check counts them).
const (
	NotifyTakenMessage      = "notifications sent were taken by another notifier after their claim ran out, before their outcome was recorded (they may be sent again)"
	NotifyUnrecordedMessage = "recording the outcome of notifications (those sent may be sent again)"
)

// eventIDs are the events of the deliveries ids of batch, "1,2,3".
func eventIDs(batch []store.Delivery, ids []int64) string {
	var b strings.Builder
	for _, d := range batch {
		if slices.Contains(ids, d.ID) {
			if b.Len() > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatInt(d.EventID, 10))
		}
	}
	return b.String()
}

// errNoSecret refuses to send a webhook signed with an empty key (which
// anyone could forge): every user with a target has a secret since
// schema 10, so this is a defect, never a state to send in.
var errNoSecret = errors.New("the user has no webhook signing secret: nothing is sent unsigned")

func postWebhook(ctx context.Context, client *http.Client, d store.Delivery) error {
	if d.Secret == "" {
		return errNoSecret
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.Target.Address, bytes.NewReader(d.Payload))
	if err != nil {
		return err
	}
	var p store.NotifyPayload
	json.Unmarshal(d.Payload, &p)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "rboinc-notifier")
	req.Header.Set(SignatureHeader, Sign(d.Secret, d.Payload))
	req.Header.Set("X-Rboinc-Event", p.Type)
	req.Header.Set("X-Rboinc-Delivery", strconv.FormatInt(d.EventID, 10))
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("the webhook answered %s", resp.Status)
	}
	return nil
}

func (e *Engine) sendEventMail(ctx context.Context, d store.Delivery) error {
	if !e.Cfg.SMTP.Configured() {
		return mail.ErrNoServer
	}
	var p store.NotifyPayload
	if err := json.Unmarshal(d.Payload, &p); err != nil {
		return fmt.Errorf("reading the queued event: %w", err)
	}
	subject, text := EventMail(p)
	ctx, cancel := context.WithTimeout(ctx, notifyTimeout)
	defer cancel()
	return mail.Send(ctx, e.Cfg.SMTP, mail.Message{To: []string{d.Target.Address}, Subject: subject, Text: text})
}

// EventMail is the subject and text of an event's e-mail.
func EventMail(p store.NotifyPayload) (subject, text string) {
	what := strings.ReplaceAll(p.Type, "_", " ")
	if p.Name != "" {
		subject = fmt.Sprintf("rboinc: %s %s/%s", what, p.Group, p.Name)
	} else {
		subject = fmt.Sprintf("rboinc: %s %s", what, p.Group)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Event:  %s\nUser:   %s\nGroup:  %s\n", p.Type, p.User, p.Group)
	if p.Name != "" {
		fmt.Fprintf(&b, "Chain:  %s\n", p.Name)
	}
	if p.Step >= 0 {
		fmt.Fprintf(&b, "Step:   %d\n", p.Step)
	}
	fmt.Fprintf(&b, "Time:   %s\n", time.Unix(p.Time, 0).UTC().Format(time.RFC1123))
	if p.Reason != "" {
		fmt.Fprintf(&b, "Reason: %s\n", p.Reason)
	}
	fmt.Fprintf(&b, "Id:     %d\n\nrboinc-retrieve -status -group %s shows where the group stands.\n", p.ID, p.Group)
	return subject, b.String()
}
