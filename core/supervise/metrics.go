package supervise

import (
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are the supervisor's Prometheus metrics, in a registry of their
// own (with the Go runtime's and the process's collectors), which GET
// /metrics serves. Their agent label is the runtime's role
// and workspace its workspace_id.
//
// The methods of a nil *Metrics do nothing, so a supervisor may run
// without them.
type Metrics struct {
	Registry *prometheus.Registry

	attempt, delivered, retry, timeout, acked, deferred *prometheus.CounterVec
	failed, restart, drift                              *prometheus.CounterVec
	storeErrors                                         prometheus.Counter
	delivery, ack                                       *prometheus.HistogramVec
	status                                              *prometheus.GaugeVec

	mu   sync.Mutex
	seen map[[2]string]map[string]bool // runtime (agent, workspace) → statuses with a series
}

// latencyBuckets are the histograms' buckets in seconds: from a few
// milliseconds (a send to an idle agent) to ten minutes (a deferral while
// the operator types, an agent busy with a long turn).
var latencyBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}

// runtimeStatuses are the statuses the runtime gauge has a series for from
// a runtime's first report on.
var runtimeStatuses = []RuntimeStatus{Starting, Ready, Triggering, AwaitingAck, Retrying, Deferred, Failed, Offline}

// NewMetrics makes the metrics and their registry.
func NewMetrics() *Metrics {
	rt := []string{"agent", "workspace"}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	histogram := func(name, help string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: latencyBuckets}, rt)
	}
	m := &Metrics{
		Registry:  prometheus.NewRegistry(),
		attempt:   counter("tmux_trigger_attempt_total", "Deliveries of a trigger to its runtime's pane that were started.", rt...),
		delivered: counter("tmux_trigger_delivered_total", "Triggers delivered to their runtime's pane.", rt...),
		retry:     counter("tmux_trigger_retry_total", "Triggers that went to retrying after no ack came in time.", rt...),
		timeout:   counter("tmux_trigger_timeout_total", "Ack windows that ended without an ack.", rt...),
		acked:     counter("tmux_trigger_acked_total", "Triggers their agent acknowledged.", rt...),
		deferred:  counter("tmux_trigger_deferred_total", "Triggers deferred (operator busy, rate limited).", rt...),
		failed:    counter("tmux_trigger_failed_total", "Triggers that failed, by class.", "agent", "workspace", "class"),
		restart:   counter("tmux_runtime_restart_total", "Restarts of a runtime that went offline.", rt...),
		drift:     counter("tmux_reconcile_drift_total", "Runtimes whose pane or pid changed behind the supervisor's back, corrected.", rt...),
		delivery:  histogram("tmux_trigger_delivery_seconds", "Time from a trigger queued to delivered."),
		ack:       histogram("tmux_trigger_ack_seconds", "Time from a trigger delivered to acked."),
		storeErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tmux_store_write_errors_total",
			Help: "Steps of a trigger the supervisor could not save to its store (a full disk, an I/O error); it is reconciled with what its agent shows.",
		}),
		status: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tmux_runtime_status",
			Help: "1 for a runtime's current status, 0 for its others.",
		}, []string{"agent", "workspace", "status"}),
		seen: map[[2]string]map[string]bool{},
	}
	m.Registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.attempt, m.delivered, m.retry, m.timeout, m.acked, m.deferred, m.failed, m.restart, m.drift,
		m.delivery, m.ack, m.status, m.storeErrors,
	)
	return m
}

// Restart counts a runtime restarted.
func (m *Metrics) Restart(agent, workspace string) {
	if m != nil {
		m.restart.WithLabelValues(agent, workspace).Inc()
	}
}

// Drift counts a runtime's registry drift corrected.
func (m *Metrics) Drift(agent, workspace string) {
	if m != nil {
		m.drift.WithLabelValues(agent, workspace).Inc()
	}
}

// Attempt counts a delivery started.
func (m *Metrics) Attempt(agent, workspace string) {
	if m != nil {
		m.attempt.WithLabelValues(agent, workspace).Inc()
	}
}

// Delivered counts a trigger delivered, d after it was queued.
func (m *Metrics) Delivered(agent, workspace string, d time.Duration) {
	if m != nil {
		m.delivered.WithLabelValues(agent, workspace).Inc()
		m.delivery.WithLabelValues(agent, workspace).Observe(durSeconds(d))
	}
}

// Retry counts a trigger gone to retrying.
func (m *Metrics) Retry(agent, workspace string) {
	if m != nil {
		m.retry.WithLabelValues(agent, workspace).Inc()
	}
}

// Timeout counts an ack window that ended without an ack.
func (m *Metrics) Timeout(agent, workspace string) {
	if m != nil {
		m.timeout.WithLabelValues(agent, workspace).Inc()
	}
}

// Acked counts a trigger acknowledged, d after it was delivered.
func (m *Metrics) Acked(agent, workspace string, d time.Duration) {
	if m != nil {
		m.acked.WithLabelValues(agent, workspace).Inc()
		m.ack.WithLabelValues(agent, workspace).Observe(durSeconds(d))
	}
}

// Deferred counts a trigger deferred.
func (m *Metrics) Deferred(agent, workspace string) {
	if m != nil {
		m.deferred.WithLabelValues(agent, workspace).Inc()
	}
}

// Failed counts a trigger failed with class (a Class's name).
func (m *Metrics) Failed(agent, workspace, class string) {
	if m != nil {
		m.failed.WithLabelValues(agent, workspace, class).Inc()
	}
}

// StoreError counts a trigger's step that could not be saved.
func (m *Metrics) StoreError() {
	if m != nil {
		m.storeErrors.Inc()
	}
}

// RuntimeStatus sets the runtime's status gauge: 1 for status, 0 for every
// other status (the known ones and any it reported before).
func (m *Metrics) RuntimeStatus(agent, workspace, status string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	key := [2]string{agent, workspace}
	seen := m.seen[key]
	if seen == nil {
		seen = map[string]bool{}
		for _, s := range runtimeStatuses {
			seen[string(s)] = true
		}
		m.seen[key] = seen
	}
	seen[status] = true
	for s := range seen {
		v := 0.0
		if s == status {
			v = 1
		}
		m.status.WithLabelValues(agent, workspace, s).Set(v)
	}
}

// Handler serves the registry in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}

func durSeconds(d time.Duration) float64 {
	if d < 0 {
		return 0
	}
	return d.Seconds()
}
