package supervise

import (
	"github.com/prometheus/client_golang/prometheus"
)

// UsageSample is what one role's agent spent on one model, from the
// agents' own records: tokens by kind (input, output, cache_read,
// cache_write, reasoning), and the cost in USD when the model has a price
// for every kind it used.
type UsageSample struct {
	Role   string
	Agent  string // claude, codex, gemini
	Model  string
	Tokens map[string]int64
	Cost   *float64
}

// CountUsage adds the usage counters to the registry,
// tmux_agent_tokens_total (by agent, agent_kind, model and kind) and
// tmux_agent_cost_usd_total (by agent, agent_kind and model), read from
// usage at each scrape: what the agents recorded is the count, so a
// supervisor that starts again counts on from where they stand.
func (m *Metrics) CountUsage(usage func() []UsageSample) {
	m.Registry.MustRegister(usageCollector{
		usage:  usage,
		tokens: prometheus.NewDesc("tmux_agent_tokens_total", "Tokens the agents' models used, from the agents' own records, by kind.", []string{"agent", "agent_kind", "model", "kind"}, nil),
		cost:   prometheus.NewDesc("tmux_agent_cost_usd_total", "What the agents' models cost in USD at price.MODEL.* (models with a price for every kind of token they used).", []string{"agent", "agent_kind", "model"}, nil),
	})
}

type usageCollector struct {
	usage        func() []UsageSample
	tokens, cost *prometheus.Desc
}

func (c usageCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.tokens
	ch <- c.cost
}

func (c usageCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.usage() {
		for kind, n := range s.Tokens {
			ch <- prometheus.MustNewConstMetric(c.tokens, prometheus.CounterValue, float64(n), s.Role, s.Agent, s.Model, kind)
		}
		if s.Cost != nil {
			ch <- prometheus.MustNewConstMetric(c.cost, prometheus.CounterValue, *s.Cost, s.Role, s.Agent, s.Model)
		}
	}
}
