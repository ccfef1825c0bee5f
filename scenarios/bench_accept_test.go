package scenarios

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// BenchmarkAccept is the supervisor's acceptance run on the real claude,
// codex and gemini against the fake model (testdata/accept/real_accept):
// 200 triggers while an agent is kill -9ed, a pane killed, the supervisor
// kill -9ed and a draft left past the defer window, once at the
// supervisor's default timeouts (default) and once at shortened ones
// (short). Each trigger's arrivals are counted from the fake model's log
// (cmdAccept, countArrivals); a trigger lost, doubled or open, or fewer
// than 99% acked without a person, fails it. It reports the share acked,
// the resumes and the failures. make accept runs it once and sets
// $PARTY_ACCEPT_RESULTS to docs/results/, where each run writes its
// figures (accept-real.json, accept-real-short.json);
// $PARTY_ACCEPT_FIGURES names a directory of yours that keeps each run's
// figures, audit trail, triggers, model log and claude's screens.
func BenchmarkAccept(b *testing.B) {
	if _, err := exec.LookPath("tmux"); err != nil {
		b.Fatalf("tmux is required: %v", err)
	}
	for _, run := range []struct{ timeouts, result string }{
		{"default", "accept-real"},
		{"short", "accept-real-short"},
	} {
		b.Run(run.timeouts, func(b *testing.B) {
			dir := b.TempDir()
			if out := os.Getenv("PARTY_ACCEPT_FIGURES"); out != "" {
				dir = out // kept for a report
				if err := os.MkdirAll(dir, 0o755); err != nil {
					b.Fatal(err)
				}
			}
			figures := filepath.Join(dir, run.result)
			for i := 0; i < b.N; i++ {
				p := params(filepath.Join("testdata", "accept"), b.TempDir())
				inner := p.Setup
				p.Setup = func(env *testscript.Env) error {
					if err := inner(env); err != nil {
						return err
					}
					env.Setenv("ACCEPT_FIGURES", figures)
					env.Setenv("ACCEPT_TIMEOUTS", run.timeouts)
					env.Setenv("ACCEPT_RESULT", run.result)
					return nil
				}
				testscript.RunT(benchT{b}, p)
			}
			data, err := os.ReadFile(figures)
			if err != nil {
				b.Fatalf("the run wrote no figures: %v", err)
			}
			var res acceptResult
			if err := json.Unmarshal(data, &res); err != nil {
				b.Fatalf("the figures %s: %v", figures, err)
			}
			b.ReportMetric(res.Figures.AckedPercent, "%acked")
			b.ReportMetric(float64(res.Figures.Resumed), "resumed")
			b.ReportMetric(float64(res.Figures.Failed), "failed")
		})
	}
}

// benchT runs testscript's scripts in a benchmark, one after another.
type benchT struct{ b *testing.B }

func (t benchT) Skip(args ...any)  { t.b.Skip(args...) }
func (t benchT) Fatal(args ...any) { t.b.Fatal(args...) }
func (t benchT) Parallel()         {}
func (t benchT) Log(args ...any)   { t.b.Log(args...) }
func (t benchT) FailNow()          { t.b.FailNow() }
func (t benchT) Verbose() bool     { return testing.Verbose() }
func (t benchT) Run(name string, f func(testscript.T)) {
	f(t)
}
