package scenarios

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/state"
)

// BenchmarkUsageHistory measures party usage --all over 200 teams whose
// claude agents recorded about 1 GB of transcripts together (PARTY_BENCH_USAGE_MB
// sets the total): the first run, which reads every transcript, and a
// second after one more response, which must read only what was added.
// One real team with a mock claude gives the shapes (its record, its
// event log naming the transcript, a transcript line with usage); the
// other 199 are copies of it with transcripts of their own, each
// response a distinct message padded to about 4 KB, as real ones carry
// text and tool output. Checked: every response is counted, once.
// Reported: first-s, second-s (the mean of the b.N later runs, each
// after one more response), and second/first.
func BenchmarkUsageHistory(b *testing.B) {
	const teams = 200
	totalMB := 1024
	if v := os.Getenv("PARTY_BENCH_USAGE_MB"); v != "" {
		if _, err := fmt.Sscan(v, &totalMB); err != nil {
			b.Fatalf("PARTY_BENCH_USAGE_MB=%q: %v", v, err)
		}
	}
	s := newBench(b, "on *\n  say ok\n  usage input=1000 output=100\n", "claude")
	s.party(b, "talk", "claude", "hello", "--wait", "--timeout", "30s")
	root := s.env["XDG_STATE_HOME"] + "/party"
	var first string
	deadline := time.Now().Add(waitLimit)
	for first == "" && time.Now().Before(deadline) { // its transcript, once the mock wrote it
		if out := s.party(b, "usage", "--all", "--json"); strings.Contains(out, `"responses": 1`) {
			first = out
		}
		time.Sleep(50 * time.Millisecond)
	}
	if first == "" {
		b.Fatal("the mock's response never showed in party usage")
	}
	dirs, err := filepath.Glob(filepath.Join(root, "sessions", "bench-*"))
	if err != nil || len(dirs) != 1 {
		b.Fatalf("the bench team's state dir: %v %v", dirs, err)
	}
	model := dirs[0]
	rec, err := session.ReadRecord(model)
	if err != nil {
		b.Fatal(err)
	}
	events, err := os.ReadFile(filepath.Join(model, state.EventLog))
	if err != nil {
		b.Fatal(err)
	}
	transcript, line := claudeTranscript(b, events)

	perTeam := totalMB << 20 / teams
	responses := 0
	var last string // the last team's transcript, which gets one more response
	for i := 1; i < teams; i++ {
		name := fmt.Sprintf("team%03d", i)
		dir := state.SessionDir(root, rec.Socket, name)
		if err := state.MkdirPrivate(dir); err != nil {
			b.Fatal(err)
		}
		r := rec
		r.Session = name
		if err := session.WriteRecord(dir, r); err != nil {
			b.Fatal(err)
		}
		path := filepath.Join(filepath.Dir(transcript), name+".jsonl")
		if err := os.WriteFile(filepath.Join(dir, state.EventLog), bytes.ReplaceAll(events, []byte(transcript), []byte(path)), 0o600); err != nil {
			b.Fatal(err)
		}
		responses += writeTranscript(b, path, line, name, perTeam)
		last = path
	}
	b.ResetTimer()
	start := time.Now()
	out := s.party(b, "usage", "--all", "--by", "team")
	firstRun := time.Since(start)
	if !strings.Contains(out, "team199") {
		b.Fatalf("party usage lacks team199:\n%s", out)
	}
	var second time.Duration
	for i := range b.N {
		f, err := os.OpenFile(last, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.WriteString(uniqueLine(line, "more", i) + "\n"); err != nil {
			b.Fatal(err)
		}
		_ = f.Close()
		start = time.Now()
		out = s.party(b, "usage", "--all", "--by", "agent", "--json")
		second += time.Since(start)
		// The bench team's own response, every copy's, and the ones added.
		if want := fmt.Sprintf(`"responses": %d,`, 1+responses+i+1); !strings.Contains(out, want) {
			b.Fatalf("party usage --by agent: want %s (each response once):\n%s", want, out)
		}
	}
	mean := second / time.Duration(b.N)
	// The same run with nothing new: what visiting 200 teams' ledgers
	// costs, the floor a later run's cost stands on.
	start = time.Now()
	s.party(b, "usage", "--all", "--by", "agent", "--json")
	b.ReportMetric(time.Since(start).Seconds(), "unchanged-s")
	b.ReportMetric(firstRun.Seconds(), "first-s")
	b.ReportMetric(mean.Seconds(), "second-s")
	b.ReportMetric(mean.Seconds()/firstRun.Seconds(), "second/first")
	b.ReportMetric(float64(responses+1), "responses")
}

// claudeTranscript is the transcript the bench team's claude recorded
// (named by its event log) and its line with usage.
func claudeTranscript(b *testing.B, events []byte) (path, line string) {
	b.Helper()
	sc := bufio.NewScanner(bytes.NewReader(events))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev struct {
			Transcript string `json:"transcript"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Transcript != "" {
			path = ev.Transcript
		}
	}
	if path == "" {
		b.Fatalf("no transcript in the event log:\n%s", events)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, `"usage"`) {
			return path, l
		}
	}
	b.Fatalf("no line with usage in %s:\n%s", path, data)
	return "", ""
}

// writeTranscript writes about size bytes of distinct responses made from
// line into path and returns how many.
func writeTranscript(b *testing.B, path, line, team string, size int) int {
	b.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	n, written := 0, 0
	for written < size {
		l := uniqueLine(line, team, n) + "\n"
		written += len(l)
		if _, err := w.WriteString(l); err != nil {
			b.Fatal(err)
		}
		n++
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return n
}

// uniqueLine is line as response n of team: its message id, uuid and
// session are its own, and its text is padded to about 4 KB.
func uniqueLine(line, team string, n int) string {
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		return line
	}
	id := fmt.Sprintf("%s-%d", team, n)
	m["uuid"], m["sessionId"] = id, team
	if msg, ok := m["message"].(map[string]any); ok {
		msg["id"] = "msg_" + id
		msg["content"] = []any{map[string]any{"type": "text", "text": strings.Repeat("the answer goes on. ", 200)}}
	}
	out, _ := json.Marshal(m)
	return string(out)
}
