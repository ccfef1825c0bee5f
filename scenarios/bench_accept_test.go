package scenarios

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// BenchmarkAccept is the supervisor's acceptance run on the real claude,
// codex and gemini against the fake model (testdata/accept/real_accept):
// 200 triggers while an agent is kill -9ed, a pane killed, the supervisor
// kill -9ed and a draft left past the defer window. It reports the share
// acked without a person (the goal is 99%), the fallbacks taken and the
// failures; lost and doubled triggers fail it. make accept runs it once;
// $PARTY_ACCEPT_FIGURES keeps the figures in a file of yours.
func BenchmarkAccept(b *testing.B) {
	if _, err := exec.LookPath("tmux"); err != nil {
		b.Fatalf("tmux is required: %v", err)
	}
	figures := filepath.Join(b.TempDir(), "figures")
	if out := os.Getenv("PARTY_ACCEPT_FIGURES"); out != "" {
		figures = out // kept for a report
	}
	for i := 0; i < b.N; i++ {
		p := params(filepath.Join("testdata", "accept"), b.TempDir())
		inner := p.Setup
		p.Setup = func(env *testscript.Env) error {
			if err := inner(env); err != nil {
				return err
			}
			env.Setenv("ACCEPT_FIGURES", figures)
			return nil
		}
		testscript.RunT(benchT{b}, p)
	}
	f, err := os.Open(figures)
	if err != nil {
		b.Fatalf("the run wrote no figures: %v", err)
	}
	defer f.Close()
	got := map[string]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		b.Log(sc.Text())
		k, v, ok := strings.Cut(sc.Text(), " ")
		if n, err := strconv.ParseFloat(v, 64); ok && err == nil {
			got[k] = n
		}
	}
	if got["triggers"] > 0 {
		b.ReportMetric(100*got["acked"]/got["triggers"], "%acked")
	}
	b.ReportMetric(got["resumed"], "resumed")
	b.ReportMetric(got["failed"], "failed")
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
