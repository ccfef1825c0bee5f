package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/partyhq/party/core/supervise"
)

// BenchmarkMCPInboxRead measures a runtime reading 10 unread messages:
// an inbox_read tool call through an MCP session that is already
// connected (party mcp, the SDK's client over stdio, as an agent holds
// it), beside party inbox read --json run as a process (as an agent's
// shell tool runs it). Each read is checked to bring back exactly the 10
// messages put into a thread of its own through the supervisor's API.
// Reported: each way's mean and p50, and cli/mcp (how many times faster
// the tool call is); the tool call must be the faster.
func BenchmarkMCPInboxRead(b *testing.B) {
	s := newBenchWith(b, "on *\n  say ok\n", []string{"--supervise"}, "claude")
	var st struct {
		Socket string `json:"socket"`
	}
	if err := json.Unmarshal([]byte(s.party(b, "supervise", "status", "--json")), &st); err != nil || st.Socket == "" {
		b.Fatalf("supervise status: %v (socket %q)", err, st.Socket)
	}
	api := supervise.NewUnixClient(st.Socket)
	token := runtimeToken(b, s, "claude")
	env := append(s.environ(), "PARTY_RUNTIME_TOKEN="+token)

	ctx := context.Background()
	cmd := exec.Command(s.bin, "mcp")
	cmd.Env = env
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cs.Close() }()

	// fill puts 10 messages to claude into a thread of their own.
	fill := func(thread string) {
		for i := range 10 {
			if _, err := api.Send(ctx, supervise.MessageRequest{Thread: thread, To: "claude", From: "bench", Text: fmt.Sprintf("message %d of %s", i, thread)}); err != nil {
				b.Fatal(err)
			}
		}
	}
	// check says the answer holds exactly the 10 messages of thread.
	check := func(how, thread string, raw []byte) {
		var got struct {
			Messages []struct {
				Thread string `json:"thread"`
			} `json:"messages"`
		}
		var list []struct {
			Thread string `json:"thread_id"`
		}
		n := 0
		if err := json.Unmarshal(raw, &got); err == nil && got.Messages != nil {
			for _, m := range got.Messages {
				if m.Thread == thread {
					n++
				}
			}
		} else if err := json.Unmarshal(raw, &list); err == nil {
			for _, m := range list {
				if m.Thread == thread {
					n++
				}
			}
		}
		if n != 10 {
			b.Fatalf("%s read %d messages of %s, want 10:\n%s", how, n, thread, raw)
		}
	}

	var viaMCP, viaCLI []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		thread := "mcp" + strconv.Itoa(i)
		fill(thread)
		p := &sdk.CallToolParams{Name: "inbox_read", Arguments: map[string]any{"thread": thread}}
		b.StartTimer()
		start := time.Now()
		res, err := cs.CallTool(ctx, p)
		d := time.Since(start)
		b.StopTimer()
		if err != nil || res.IsError {
			b.Fatalf("inbox_read: %v %s", err, text(res))
		}
		raw, _ := json.Marshal(res.StructuredContent)
		check("inbox_read", thread, raw)
		viaMCP = append(viaMCP, d)

		thread = "cli" + strconv.Itoa(i)
		fill(thread)
		c := exec.Command(s.bin, "inbox", "read", "--thread", thread, "--json")
		c.Env = env
		b.StartTimer()
		start = time.Now()
		out, err := c.Output()
		d = time.Since(start)
		b.StopTimer()
		if err != nil {
			b.Fatalf("party inbox read: %v\n%s", err, out)
		}
		check("party inbox read", thread, out)
		viaCLI = append(viaCLI, d)
		b.StartTimer()
	}
	b.StopTimer()
	report(b, "mcp", viaMCP)
	report(b, "cli", viaCLI)
	mcpP50, cliP50 := percentile(viaMCP, 0.5), percentile(viaCLI, 0.5)
	b.ReportMetric(float64(cliP50)/float64(mcpP50), "cli/mcp-p50")
	if mcpP50 >= cliP50 {
		b.Errorf("an inbox_read tool call (p50 %s) is not faster than party inbox read as a process (p50 %s)", mcpP50, cliP50)
	}
}

// runtimeToken is the runtime token party start gave role's pane, from its
// launch record.
func runtimeToken(b *testing.B, s *benchServer, role string) string {
	b.Helper()
	files, err := filepath.Glob(filepath.Join(s.env["XDG_STATE_HOME"], "party", "sessions", "*", "launch", role+".json"))
	if err != nil || len(files) != 1 {
		b.Fatalf("the launch record of %s: %v (%d found)", role, err, len(files))
	}
	raw, err := os.ReadFile(files[0])
	if err != nil {
		b.Fatal(err)
	}
	m := regexp.MustCompile(`PARTY_RUNTIME_TOKEN=([0-9a-f]+)`).FindSubmatch(raw)
	if m == nil {
		b.Fatalf("no runtime token in %s", files[0])
	}
	return string(m[1])
}
