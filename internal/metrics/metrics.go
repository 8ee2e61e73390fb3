package metrics

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/rboinc/rboinc/internal/query"
	"github.com/rboinc/rboinc/internal/store"
)

// Path is where the metrics are served, under the server's base path.
const Path = "/metrics"

// Metrics holds a private registry (not Prometheus's global one: several
// servers may run in one process, as in tests).
type Metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	errors   *prometheus.CounterVec
	log      *slog.Logger
}

// New makes the metrics of a state database, read through db.
func New(db *query.Reader, log *slog.Logger) *Metrics {
	if log == nil {
		log = slog.Default()
	}
	m := &Metrics{reg: prometheus.NewRegistry(), log: log}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rboinc_http_requests_total",
		Help: "HTTP requests answered by this server process, by endpoint (the route's pattern) and status code.",
	}, []string{"endpoint", "code"})
	m.errors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rboinc_http_request_errors_total",
		Help: "HTTP requests answered with a status of 400 or more by this server process, by endpoint.",
	}, []string{"endpoint"})
	m.reg.MustRegister(m.requests, m.errors, &storeCollector{db: db, log: log})
	return m
}

// Register mounts the endpoint; auth finds the request's user (the
// server's authentication): 401 without credentials, 403 for a user who
// is not an administrator.
func (m *Metrics) Register(mux *http.ServeMux, base string, auth func(*http.Request) (store.User, error)) {
	h := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorLog: slogAdapter{m.log}, ErrorHandling: promhttp.ContinueOnError})
	mux.HandleFunc("GET "+base+Path, func(w http.ResponseWriter, r *http.Request) {
		u, err := auth(r)
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Basic realm="rboinc"`)
			http.Error(w, "unauthorized: "+err.Error(), http.StatusUnauthorized)
			return
		}
		if !u.Admin {
			http.Error(w, "forbidden: the metrics are for administrators (rboinc-server user admin NAME)", http.StatusForbidden)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r)
	})
}

// Instrument counts the requests next answers, by the pattern of the
// route that took them (a bounded set, unlike paths).
func (m *Metrics) Instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		next.ServeHTTP(sw, r)
		ep := r.Pattern
		if ep == "" {
			ep = "unmatched"
		}
		m.requests.WithLabelValues(ep, strconv.Itoa(sw.code)).Inc()
		if sw.code >= 400 {
			m.errors.WithLabelValues(ep).Inc()
		}
	})
}

// statusWriter remembers the status code written.
type statusWriter struct {
	http.ResponseWriter
	code        int
	wroteHeader bool
}

func (s *statusWriter) WriteHeader(code int) {
	if !s.wroteHeader {
		s.code, s.wroteHeader = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	s.wroteHeader = true
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the real writer (flushes of
// the events feed, deadlines of slow uploads).
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// Flush keeps the writer an http.Flusher for handlers that ask so (the
// original protocol's streamed retrieval).
func (s *statusWriter) Flush() {
	s.wroteHeader = true
	http.NewResponseController(s.ResponseWriter).Flush()
}

type slogAdapter struct{ log *slog.Logger }

func (a slogAdapter) Println(v ...any) { a.log.Error("metrics", "err", v) }

// storeCollector reads the database at each scrape.
type storeCollector struct {
	db  *query.Reader
	log *slog.Logger
}

var (
	descChains      = prometheus.NewDesc("rboinc_chains", "Chains by state (purged ones included).", []string{"state"}, nil)
	descSteps       = prometheus.NewDesc("rboinc_steps", "Steps by state.", []string{"state"}, nil)
	descCreated     = prometheus.NewDesc("rboinc_steps_created_total", "Work units made for steps, retries included.", nil, nil)
	descAssimilated = prometheus.NewDesc("rboinc_steps_assimilated_total", "Steps whose work unit finished and was assimilated.", nil, nil)
	descLate        = prometheus.NewDesc("rboinc_steps_late", "Steps of running chains BOINC holds past their deadline.", nil, nil)
	descPoolFiles   = prometheus.NewDesc("rboinc_pool_files", "Contents in the content pool.", nil, nil)
	descPoolBytes   = prometheus.NewDesc("rboinc_pool_bytes", "Bytes in the content pool.", nil, nil)
	descUploads     = prometheus.NewDesc("rboinc_uploads_open", "Upload collections open (submissions being uploaded).", nil, nil)
	descResultFiles = prometheus.NewDesc("rboinc_result_files", "Finished outputs waiting for their users.", nil, nil)
	descResultBytes = prometheus.NewDesc("rboinc_result_bytes", "Bytes of finished outputs waiting for their users.", nil, nil)
	descUsers       = prometheus.NewDesc("rboinc_users", "Accounts, by state.", []string{"state"}, nil)
	descHook        = prometheus.NewDesc("rboinc_hook_seconds", "Time the assimilator hook took to record a finished work unit.", nil, nil)
	descCreateWork  = prometheus.NewDesc("rboinc_create_work_seconds", "Time one create_work run took (submissions and next steps).", nil, nil)
	descRelinked    = prometheus.NewDesc("rboinc_inputs_relinked_total", "Inputs of work units BOINC holds that were missing from download/ (or not the pool's content) and were linked again from the pool.", nil, nil)
	descUnrestored  = prometheus.NewDesc("rboinc_inputs_unrestorable_total", "Inputs of work units BOINC holds found missing from download/ (or different) whose content the pool no longer had, each counted once.", nil, nil)
	descScrapeError = prometheus.NewDesc("rboinc_scrape_error", "1 when the state database could not be read for this scrape.", nil, nil)
)

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descChains, descSteps, descCreated, descAssimilated, descLate, descPoolFiles, descPoolBytes,
		descUploads, descResultFiles, descResultBytes, descUsers, descHook, descCreateWork, descRelinked, descUnrestored, descScrapeError} {
		ch <- d
	}
}

func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	failed := 0.0
	t, err := c.db.ServerTotals(ctx)
	if err != nil {
		c.log.Error("metrics: reading the state database", "err", err)
		failed = 1
	} else {
		for _, s := range []string{"running", "done", "failed", "stopped", "aborted", "purged"} {
			t.ChainsByState[s] += 0 // every usual state, at 0 too
		}
		for s, n := range t.ChainsByState {
			ch <- prometheus.MustNewConstMetric(descChains, prometheus.GaugeValue, float64(n), s)
		}
		for s, n := range t.StepsByState {
			ch <- prometheus.MustNewConstMetric(descSteps, prometheus.GaugeValue, float64(n), s)
		}
		gauge := func(d *prometheus.Desc, v int64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v))
		}
		ch <- prometheus.MustNewConstMetric(descCreated, prometheus.CounterValue, float64(t.StepsCreated))
		ch <- prometheus.MustNewConstMetric(descAssimilated, prometheus.CounterValue, float64(t.StepsDone))
		gauge(descLate, t.StepsLate)
		gauge(descPoolFiles, t.PoolFiles)
		gauge(descPoolBytes, t.PoolBytes)
		gauge(descUploads, t.UploadsOpen)
		gauge(descResultFiles, t.ResultFiles)
		gauge(descResultBytes, t.ResultBytes)
		ch <- prometheus.MustNewConstMetric(descUsers, prometheus.GaugeValue, float64(t.Users-t.Disabled), "active")
		ch <- prometheus.MustNewConstMetric(descUsers, prometheus.GaugeValue, float64(t.Disabled), "disabled")
	}
	lat, err := c.db.Latencies(ctx)
	if err != nil {
		c.log.Error("metrics: reading latencies", "err", err)
		failed = 1
	}
	for kind, d := range map[string]*prometheus.Desc{store.LatencyHook: descHook, store.LatencyCreateWork: descCreateWork} {
		h := lat[kind]
		buckets := map[float64]uint64{}
		var cum uint64
		for i, le := range store.LatencyBuckets {
			if h.Counts != nil {
				cum += h.Counts[i]
			}
			buckets[le] = cum
		}
		ch <- prometheus.MustNewConstHistogram(d, h.Count, h.Sum, buckets)
	}
	counts, err := c.db.Counts(ctx)
	if err != nil {
		c.log.Error("metrics: reading counters", "err", err)
		failed = 1
	}
	ch <- prometheus.MustNewConstMetric(descRelinked, prometheus.CounterValue, float64(counts[store.CountInputsRelinked]))
	ch <- prometheus.MustNewConstMetric(descUnrestored, prometheus.CounterValue, float64(counts[store.CountInputsUnrestorable]))
	ch <- prometheus.MustNewConstMetric(descScrapeError, prometheus.GaugeValue, failed)
}
