package fakegithub

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGhAnswersAsTheRealGh runs the same gh api calls, the ones party's
// GitHub store makes and their failures, through the real gh against one
// server and through Gh against a twin: what each prints and its exit
// code are the same, but for the servers' addresses. It is the proof
// behind the -short tests that use Gh, so it runs in the full run only
// (it needs the real gh).
func TestGhAnswersAsTheRealGh(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real gh: the full run proves Gh against it")
	}
	ghPath(t)
	twin := func() *Server {
		t0 := time.Date(2026, 11, 23, 20, 0, 0, 0, time.UTC)
		return start(t, Options{Token: "fidelity-token", Repos: []string{"acme/widgets"}, Now: func() time.Time { return t0 }})
	}
	real, fake := twin(), twin()
	noToken := func(env []string) []string {
		var out []string
		for _, kv := range env {
			if !strings.HasPrefix(kv, "GH_ENTERPRISE_TOKEN=") {
				out = append(out, kv)
			}
		}
		return out
	}
	calls := []struct {
		name  string
		stdin string
		env   func([]string) []string
		args  []string
	}{
		{"the user", "", nil, []string{"api", "-X", "GET", "user"}},
		{"the repository", "", nil, []string{"api", "-X", "GET", "repos/acme/widgets"}},
		{"no such repository", "", nil, []string{"api", "-X", "GET", "repos/acme/nothing"}},
		{"a label", `{"name":"party:pending","color":"FBCA04","description":"party pm"}`, nil, []string{"api", "-X", "POST", "repos/acme/widgets/labels", "--input", "-"}},
		{"the label again", `{"name":"party:pending","color":"FBCA04"}`, nil, []string{"api", "-X", "POST", "repos/acme/widgets/labels", "--input", "-"}},
		{"a milestone", `{"title":"v1"}`, nil, []string{"api", "-X", "POST", "repos/acme/widgets/milestones", "--input", "-"}},
		{"an issue", `{"title":"a","body":"","labels":["party:pending","party:assignee:codex"],"milestone":1}`, nil, []string{"api", "-X", "POST", "repos/acme/widgets/issues", "--input", "-"}},
		{"a second issue", `{"title":"b","body":""}`, nil, []string{"api", "-X", "POST", "repos/acme/widgets/issues", "--input", "-"}},
		{"an empty title", `{"title":""}`, nil, []string{"api", "-X", "POST", "repos/acme/widgets/issues", "--input", "-"}},
		{"labels on", `{"labels":["party:done"]}`, nil, []string{"api", "-X", "POST", "repos/acme/widgets/issues/1/labels", "--input", "-"}},
		{"a label off", "", nil, []string{"api", "-X", "DELETE", "repos/acme/widgets/issues/1/labels/party:pending"}},
		{"a label not there", "", nil, []string{"api", "-X", "DELETE", "repos/acme/widgets/issues/1/labels/party:pending"}},
		{"closed", `{"state":"closed","state_reason":"completed"}`, nil, []string{"api", "-X", "PATCH", "repos/acme/widgets/issues/1", "--input", "-"}},
		{"not JSON", `{`, nil, []string{"api", "-X", "PATCH", "repos/acme/widgets/issues/1", "--input", "-"}},
		{"a comment", `{"body":"**[party]** Status changed"}`, nil, []string{"api", "-X", "POST", "repos/acme/widgets/issues/1/comments", "--input", "-"}},
		{"pages", "", nil, []string{"api", "--paginate", "repos/acme/widgets/issues?state=all&per_page=1&direction=asc"}},
		{"comments", "", nil, []string{"api", "--paginate", "repos/acme/widgets/issues/comments?per_page=100&since=2026-11-23T20:00:00Z"}},
		{"milestones", "", nil, []string{"api", "--paginate", "repos/acme/widgets/milestones?state=all&per_page=100"}},
		{"a page of nothing", "", nil, []string{"api", "--paginate", "repos/acme/nothing/labels?per_page=100"}},
		{"a wrong token", "", func(env []string) []string { return append(env, "GH_ENTERPRISE_TOKEN=wrong") }, []string{"api", "-X", "GET", "user"}},
		{"no token", "", noToken, []string{"api", "-X", "GET", "user"}},
		{"offline", "", nil, []string{"api", "-X", "GET", "user"}},
		{"offline list", "", nil, []string{"api", "--paginate", "repos/acme/widgets/labels?per_page=100"}},
	}
	for _, c := range calls {
		if c.name == "offline" {
			require.NoError(t, real.Stop())
			require.NoError(t, fake.Stop())
		}
		run := func(s *Server, viaReal bool) (string, string, int) {
			env := append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, s.Env()...)
			if c.env != nil {
				env = c.env(env)
			}
			if viaReal {
				return realGh(t, env, c.stdin, c.args...)
			}
			out, errOut, code, err := Gh{Env: env}.Run(context.Background(), c.args, []byte(c.stdin))
			require.NoError(t, err)
			return string(out), string(errOut), code
		}
		rOut, rErr, rCode := run(real, true)
		fOut, fErr, fCode := run(fake, false)
		norm := func(s *Server, text string) string { return strings.ReplaceAll(text, s.Host(), "HOST") }
		assert.Equal(t, rCode, fCode, "%s: exit", c.name)
		assert.Equal(t, norm(real, rOut), norm(fake, fOut), "%s: stdout", c.name)
		assert.Equal(t, norm(real, rErr), norm(fake, fErr), "%s: stderr", c.name)
	}
	// The twins hold the same: the requests were the same too.
	for _, n := range []int{1, 2} {
		ri, err := real.Issue("acme/widgets", n)
		require.NoError(t, err)
		fi, err := fake.Issue("acme/widgets", n)
		require.NoError(t, err)
		assert.Equal(t, ri, fi)
	}
	rLog, err := ReadLog(real.LogPath())
	require.NoError(t, err)
	fLog, err := ReadLog(fake.LogPath())
	require.NoError(t, err)
	require.Len(t, fLog, len(rLog))
	for i := range rLog {
		assert.Equal(t, rLog[i].Method+" "+rLog[i].Path+" "+string(rLog[i].Body), fLog[i].Method+" "+fLog[i].Path+" "+string(fLog[i].Body), "request %d", i)
	}
}
