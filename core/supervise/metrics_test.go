package supervise

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMetricsOverTheSocket(t *testing.T) {
	_, _, s, c := unixServer(t)
	m := s.Metrics
	m.Attempt("x", "w")
	m.Attempt("x", "w")
	m.Attempt("y", "w")
	m.Delivered("x", "w", 40*time.Millisecond)
	m.Retry("x", "w")
	m.Timeout("x", "w")
	m.Acked("x", "w", 3*time.Second)
	m.Deferred("y", "w")
	m.Failed("y", "w", string(AckTimeout))
	m.RuntimeStatus("x", "w", string(Ready))

	text, err := c.Metrics(context.Background())
	require.NoError(t, err)
	for _, line := range []string{
		`tmux_trigger_attempt_total{agent="x",workspace="w"} 2`,
		`tmux_trigger_attempt_total{agent="y",workspace="w"} 1`,
		`tmux_trigger_delivered_total{agent="x",workspace="w"} 1`,
		`tmux_trigger_retry_total{agent="x",workspace="w"} 1`,
		`tmux_trigger_timeout_total{agent="x",workspace="w"} 1`,
		`tmux_trigger_acked_total{agent="x",workspace="w"} 1`,
		`tmux_trigger_deferred_total{agent="y",workspace="w"} 1`,
		`tmux_trigger_failed_total{agent="y",class="ACK_TIMEOUT",workspace="w"} 1`,
		`tmux_trigger_delivery_seconds_bucket{agent="x",workspace="w",le="0.05"} 1`,
		`tmux_trigger_delivery_seconds_bucket{agent="x",workspace="w",le="0.025"} 0`,
		`tmux_trigger_delivery_seconds_count{agent="x",workspace="w"} 1`,
		`tmux_trigger_ack_seconds_bucket{agent="x",workspace="w",le="5"} 1`,
		`tmux_trigger_ack_seconds_bucket{agent="x",workspace="w",le="2.5"} 0`,
		`tmux_trigger_ack_seconds_sum{agent="x",workspace="w"} 3`,
		`tmux_runtime_status{agent="x",status="ready",workspace="w"} 1`,
		`tmux_runtime_status{agent="x",status="offline",workspace="w"} 0`,
		"# TYPE tmux_trigger_delivery_seconds histogram",
		"# TYPE tmux_runtime_status gauge",
	} {
		assert.Contains(t, text, line+"\n")
	}
}

func TestRuntimeStatusGauge(t *testing.T) {
	m := NewMetrics()
	m.RuntimeStatus("x", "w", string(Ready))
	m.RuntimeStatus("x", "w", string(AwaitingAck))
	m.RuntimeStatus("y", "w", string(Offline))
	m.RuntimeStatus("x", "w", "odd") // a status the gauge did not know
	assert.Equal(t, 1.0, testutil.ToFloat64(m.status.WithLabelValues("x", "w", "odd")))
	for _, s := range runtimeStatuses {
		assert.Equal(t, 0.0, testutil.ToFloat64(m.status.WithLabelValues("x", "w", string(s))), s)
	}
	m.RuntimeStatus("x", "w", string(Ready))
	assert.Equal(t, 1.0, testutil.ToFloat64(m.status.WithLabelValues("x", "w", "ready")))
	assert.Equal(t, 0.0, testutil.ToFloat64(m.status.WithLabelValues("x", "w", "odd")), "the odd status is reset too")
	assert.Equal(t, 1.0, testutil.ToFloat64(m.status.WithLabelValues("y", "w", "offline")), "another runtime is left alone")
	assert.Equal(t, 2*(len(runtimeStatuses))+1, testutil.CollectAndCount(m.status))

	err := testutil.GatherAndCompare(m.Registry, strings.NewReader(`
# HELP tmux_trigger_failed_total Triggers that failed, by class.
# TYPE tmux_trigger_failed_total counter
tmux_trigger_failed_total{agent="x",class="PANE_DEAD",workspace="w"} 1
`), "tmux_trigger_failed_total")
	assert.Error(t, err, "nothing failed yet")
	m.Failed("x", "w", string(PaneDead))
	require.NoError(t, testutil.GatherAndCompare(m.Registry, strings.NewReader(`
# HELP tmux_trigger_failed_total Triggers that failed, by class.
# TYPE tmux_trigger_failed_total counter
tmux_trigger_failed_total{agent="x",class="PANE_DEAD",workspace="w"} 1
`), "tmux_trigger_failed_total"))
}

func TestMetricsLint(t *testing.T) {
	m := NewMetrics()
	m.Attempt("x", "w")
	m.Delivered("x", "w", time.Second)
	m.Acked("x", "w", -time.Second) // a clock step back counts as 0
	m.Failed("x", "w", "PANE_DEAD")
	m.RuntimeStatus("x", "w", "ready")
	problems, err := testutil.GatherAndLint(m.Registry)
	require.NoError(t, err)
	assert.Empty(t, problems)
	assert.Equal(t, 0.0, histogramSum(t, m, "tmux_trigger_ack_seconds"))
}

func TestNilMetrics(t *testing.T) {
	var m *Metrics
	assert.NotPanics(t, func() {
		m.Attempt("x", "w")
		m.Delivered("x", "w", time.Second)
		m.Retry("x", "w")
		m.Timeout("x", "w")
		m.Acked("x", "w", time.Second)
		m.Deferred("x", "w")
		m.Failed("x", "w", "c")
		m.RuntimeStatus("x", "w", "ready")
		m.StoreError()
	})
}

func histogramSum(t *testing.T, m *Metrics, name string) float64 {
	t.Helper()
	mfs, err := m.Registry.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetHistogram().GetSampleSum()
		}
	}
	t.Fatalf("no %s", name)
	return 0
}

func TestUsageCounters(t *testing.T) {
	m := NewMetrics()
	usd := 1.25
	samples := []UsageSample{
		{Role: "impl", Agent: "claude", Model: "m1", Tokens: map[string]int64{"input": 1000, "output": 300}, Cost: &usd},
		{Role: "rev", Agent: "codex", Model: "m2", Tokens: map[string]int64{"reasoning": 40}},
	}
	m.CountUsage(func() []UsageSample { return samples })
	require.NoError(t, testutil.GatherAndCompare(m.Registry, strings.NewReader(`
# HELP tmux_agent_cost_usd_total What the agents' models cost in USD at price.MODEL.* (models with a price for every kind of token they used).
# TYPE tmux_agent_cost_usd_total counter
tmux_agent_cost_usd_total{agent="impl",agent_kind="claude",model="m1"} 1.25
# HELP tmux_agent_tokens_total Tokens the agents' models used, from the agents' own records, by kind.
# TYPE tmux_agent_tokens_total counter
tmux_agent_tokens_total{agent="impl",agent_kind="claude",kind="input",model="m1"} 1000
tmux_agent_tokens_total{agent="impl",agent_kind="claude",kind="output",model="m1"} 300
tmux_agent_tokens_total{agent="rev",agent_kind="codex",kind="reasoning",model="m2"} 40
`), "tmux_agent_tokens_total", "tmux_agent_cost_usd_total"))
	problems, err := testutil.GatherAndLint(m.Registry)
	require.NoError(t, err)
	assert.Empty(t, problems)
}
