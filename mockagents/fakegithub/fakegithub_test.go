package fakegithub

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/testhome"
)

// TestMain runs the tests in a home of their own (testhome).
func TestMain(m *testing.M) { os.Exit(testhome.Main(m)) }

// ghPath is the real gh; its absence fails the tests, never skips them.
func ghPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("gh")
	require.NoError(t, err, "the real gh is required (apt-get install -y gh; .ci/run installs it)")
	return p
}

func start(t *testing.T, opt Options) *Server {
	t.Helper()
	if opt.LogPath == "" {
		opt.LogPath = filepath.Join(t.TempDir(), "github.log")
	}
	s, err := Start(opt)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Close()) })
	return s
}

// gh runs gh against s with extra environment entries; it returns
// stdout, stderr and the exit code. The full run runs the real gh (its
// absence fails the test); -short runs Gh, which answers as the real gh
// does (TestGhAnswersAsTheRealGh holds it to that).
func gh(t *testing.T, s *Server, stdin string, extraEnv []string, args ...string) (string, string, int) {
	t.Helper()
	env := append(append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, s.Env()...), extraEnv...)
	if testing.Short() {
		out, errOut, code, err := Gh{Env: env}.Run(context.Background(), args, []byte(stdin))
		require.NoError(t, err)
		return string(out), string(errOut), code
	}
	return realGh(t, env, stdin, args...)
}

// realGh runs the real gh with env.
func realGh(t *testing.T, env []string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(ghPath(t), args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return out.String(), errb.String(), code
}

// ghJSON runs gh, requires success and decodes its stdout into v.
func ghJSON(t *testing.T, s *Server, stdin string, v any, args ...string) {
	t.Helper()
	out, errOut, code := gh(t, s, stdin, nil, args...)
	require.Equal(t, 0, code, "gh %v: %s", args, errOut)
	require.NoError(t, json.Unmarshal([]byte(out), v), out)
}

type ghIssue struct {
	Number    int    `json:"number"`
	NodeID    string `json:"node_id"`
	Title     string `json:"title"`
	Body      string `json:"body"`
	State     string `json:"state"`
	UpdatedAt string `json:"updated_at"`
	Labels    []struct {
		Name  string `json:"name"`
		Color string `json:"color"`
	} `json:"labels"`
	Milestone *struct {
		Number int    `json:"number"`
		Title  string `json:"title"`
	} `json:"milestone"`
}

func TestIssuesThroughRealGh(t *testing.T) {
	s := start(t, Options{})
	var lbl map[string]any
	ghJSON(t, s, "", &lbl, "api", "-X", "POST", "repos/acme/widgets/labels", "-f", "name=party:pending", "-f", "color=FBCA04")
	assert.Equal(t, "fbca04", lbl["color"])

	var ms struct{ Number int }
	ghJSON(t, s, "", &ms, "api", "-X", "POST", "repos/acme/widgets/milestones", "-f", "title=v1")
	assert.Equal(t, 1, ms.Number)

	var is ghIssue
	ghJSON(t, s, `{"title":"Write the store","body":"doc","labels":["party:pending"],"milestone":1}`, &is,
		"api", "-X", "POST", "repos/acme/widgets/issues", "--input", "-")
	assert.Equal(t, 1, is.Number)
	assert.NotEmpty(t, is.NodeID)
	assert.Equal(t, "open", is.State)
	require.Len(t, is.Labels, 1)
	assert.Equal(t, "party:pending", is.Labels[0].Name)
	require.NotNil(t, is.Milestone)
	assert.Equal(t, "v1", is.Milestone.Title)

	var patched ghIssue
	ghJSON(t, s, `{"labels":["party:done"],"state":"closed","milestone":null}`, &patched,
		"api", "-X", "PATCH", "repos/acme/widgets/issues/1", "--input", "-")
	assert.Equal(t, "closed", patched.State)
	assert.Nil(t, patched.Milestone)
	assert.NotEqual(t, is.UpdatedAt, patched.UpdatedAt, "every write changes updated_at")

	// A label named for the first time is created with GitHub's default color.
	got, err := s.Issue("acme/widgets", 1)
	require.NoError(t, err)
	assert.Equal(t, []string{"party:done"}, got.Labels)
	var done Label
	for _, l := range s.Labels("acme/widgets") {
		if l.Name == "party:done" {
			done = l
		}
	}
	assert.Equal(t, "ededed", done.Color)

	var c map[string]any
	ghJSON(t, s, "", &c, "api", "-X", "POST", "repos/acme/widgets/issues/1/comments", "-f", "body=**[party]** hello")
	cs := s.Comments("acme/widgets", 1)
	require.Len(t, cs, 1)
	assert.Equal(t, "**[party]** hello", cs[0].Body)
	assert.Equal(t, "party-test", cs[0].User)

	var all []map[string]any
	ghJSON(t, s, "", &all, "api", "repos/acme/widgets/issues/comments")
	require.Len(t, all, 1)
	assert.True(t, strings.HasSuffix(all[0]["issue_url"].(string), "/repos/acme/widgets/issues/1"), "issue_url %v", all[0]["issue_url"])

	// The request log names every request with its body.
	entries, err := ReadLog(s.LogPath())
	require.NoError(t, err)
	require.Len(t, entries, 6)
	assert.Equal(t, "PATCH", entries[3].Method)
	assert.Equal(t, "/api/v3/repos/acme/widgets/issues/1", entries[3].Path)
	assert.Equal(t, 200, entries[3].Status)
	assert.JSONEq(t, `{"labels":["party:done"],"state":"closed","milestone":null}`, string(entries[3].Body))
}

func TestListsFilterAndPaginate(t *testing.T) {
	s := start(t, Options{})
	for i := range 7 {
		var is ghIssue
		labels := `[]`
		if i%2 == 0 {
			labels = `["even"]`
		}
		ghJSON(t, s, `{"title":"t`+string(rune('0'+i))+`","labels":`+labels+`}`, &is,
			"api", "-X", "POST", "repos/o/r/issues", "--input", "-")
	}
	require.NoError(t, s.Edit("o/r", 2, "state=closed"))

	var open []ghIssue
	ghJSON(t, s, "", &open, "api", "repos/o/r/issues")
	assert.Len(t, open, 6, "state defaults to open")

	// gh --paginate follows the Link header; 2.23 prints the pages as one
	// array or as arrays one after the other, so decode them as a stream.
	out, errOut, code := gh(t, s, "", nil, "api", "--paginate", "repos/o/r/issues?state=all&per_page=2&direction=asc")
	require.Equal(t, 0, code, errOut)
	var numbers []int
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var page []ghIssue
		require.NoError(t, dec.Decode(&page))
		for _, is := range page {
			numbers = append(numbers, is.Number)
		}
	}
	assert.Equal(t, []int{1, 2, 3, 4, 5, 6, 7}, numbers)

	var even []ghIssue
	ghJSON(t, s, "", &even, "api", "repos/o/r/issues?state=all&labels=even")
	assert.Len(t, even, 4)

	// since keeps what was updated at or after the time: the edit of #2.
	is2, err := s.Issue("o/r", 2)
	require.NoError(t, err)
	var since []ghIssue
	ghJSON(t, s, "", &since, "api", "repos/o/r/issues?state=all&since="+is2.Updated.Format(time.RFC3339))
	require.Len(t, since, 1)
	assert.Equal(t, 2, since[0].Number)
}

func TestErrorsAsGitHubAnswersThem(t *testing.T) {
	s := start(t, Options{Repos: []string{"acme/widgets"}})

	_, errOut, code := gh(t, s, "", nil, "api", "repos/acme/other/issues")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "HTTP 404")

	_, errOut, code = gh(t, s, "", nil, "api", "-X", "POST", "repos/acme/widgets/milestones", "-f", "title=v1")
	require.Equal(t, 0, code, errOut)
	out, errOut, code := gh(t, s, "", nil, "api", "-X", "POST", "repos/acme/widgets/milestones", "-f", "title=v1")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "HTTP 422")
	assert.Contains(t, out, "already_exists")

	_, errOut, code = gh(t, s, "", []string{"GH_ENTERPRISE_TOKEN=wrong"}, "api", "repos/acme/widgets")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "HTTP 401")
	entries, err := ReadLog(s.LogPath())
	require.NoError(t, err)
	assert.Equal(t, 401, entries[len(entries)-1].Status, "a rejected request is logged too")
}

func TestStopIsOfflineAndResumeKeepsTheContents(t *testing.T) {
	s := start(t, Options{})
	var is ghIssue
	ghJSON(t, s, "", &is, "api", "-X", "POST", "repos/o/r/issues", "-f", "title=kept")

	require.NoError(t, s.Stop())
	_, errOut, code := gh(t, s, "", nil, "api", "repos/o/r/issues/1")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errOut, "connection refused")

	require.NoError(t, s.Resume())
	var again ghIssue
	ghJSON(t, s, "", &again, "api", "repos/o/r/issues/1")
	assert.Equal(t, "kept", again.Title)
}

func TestEditBehindTheBack(t *testing.T) {
	s := start(t, Options{})
	var is ghIssue
	ghJSON(t, s, `{"title":"a","labels":["party:pending"]}`, &is, "api", "-X", "POST", "repos/o/r/issues", "--input", "-")
	var ms struct{ Number int }
	ghJSON(t, s, "", &ms, "api", "-X", "POST", "repos/o/r/milestones", "-f", "title=v2")

	require.NoError(t, s.Edit("o/r", 1, "-label=party:pending", "+label=party:done", "state=closed",
		"milestone=v2", "title=b", "assignees=alice", "comment=done by hand"))
	var got ghIssue
	ghJSON(t, s, "", &got, "api", "repos/o/r/issues/1")
	assert.Equal(t, "b", got.Title)
	assert.Equal(t, "closed", got.State)
	require.Len(t, got.Labels, 1)
	assert.Equal(t, "party:done", got.Labels[0].Name)
	require.NotNil(t, got.Milestone)
	assert.Equal(t, "v2", got.Milestone.Title)
	assert.NotEqual(t, is.UpdatedAt, got.UpdatedAt)

	assert.Error(t, s.Edit("o/r", 1, "colour=red"))
	assert.Error(t, s.Edit("o/r", 9, "title=x"))
	assert.Contains(t, s.Describe("o/r"), `issue #1 closed "b"`)
	assert.Contains(t, s.Describe("o/r"), "comment by someone-on-github: done by hand")
}

func TestUpdatedAtMovesEvenWithinOneSecond(t *testing.T) {
	fixed := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := start(t, Options{Now: func() time.Time { return fixed }})
	var a, b ghIssue
	ghJSON(t, s, "", &a, "api", "-X", "POST", "repos/o/r/issues", "-f", "title=x")
	ghJSON(t, s, "", &b, "api", "-X", "PATCH", "repos/o/r/issues/1", "-f", "body=y")
	assert.Equal(t, "2026-01-02T03:04:05Z", a.UpdatedAt)
	assert.Equal(t, "2026-01-02T03:04:06Z", b.UpdatedAt)
}

func TestIssueLabelsOneByOne(t *testing.T) {
	s := start(t, Options{User: "octo"})
	var is ghIssue
	ghJSON(t, s, `{"title":"a","labels":["party:pending"]}`, &is, "api", "-X", "POST", "repos/o/r/issues", "--input", "-")

	// POST adds and answers the issue's labels.
	var labels []struct{ Name string }
	ghJSON(t, s, `{"labels":["party:assignee:codex"]}`, &labels, "api", "-X", "POST", "repos/o/r/issues/1/labels", "--input", "-")
	require.Len(t, labels, 2)
	assert.Equal(t, "party:pending", labels[0].Name)
	assert.Equal(t, "party:assignee:codex", labels[1].Name)

	// DELETE one, by its escaped name; again is 404 as on GitHub.
	ghJSON(t, s, "", &labels, "api", "-X", "DELETE", "repos/o/r/issues/1/labels/party%3Apending")
	require.Len(t, labels, 1)
	_, errOut, code := gh(t, s, "", nil, "api", "-X", "DELETE", "repos/o/r/issues/1/labels/party%3Apending")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errOut, "HTTP 404")

	// An edit queued for the next write lands before it is answered; a
	// read does not trigger it.
	require.NoError(t, s.EditBeforeWrite("o/r", 1, "+label=needs-review", "mycomment=mine", "comment=theirs"))
	ghJSON(t, s, "", &is, "api", "repos/o/r/issues/1")
	assert.Len(t, is.Labels, 1, "a GET leaves the edit queued")
	ghJSON(t, s, `{"labels":["party:done"]}`, &labels, "api", "-X", "POST", "repos/o/r/issues/1/labels", "--input", "-")
	var names []string
	for _, l := range labels {
		names = append(names, l.Name)
	}
	assert.Equal(t, []string{"party:assignee:codex", "needs-review", "party:done"}, names)
	cs := s.Comments("o/r", 1)
	require.Len(t, cs, 2)
	assert.Equal(t, "octo", cs[0].User, "mycomment is the token's user's")
	assert.Equal(t, "someone-on-github", cs[1].User)
	assert.Error(t, s.EditBeforeWrite("o/r", 9, "title=x"), "no issue 9")

	var me struct{ Login string }
	ghJSON(t, s, "", &me, "api", "user")
	assert.Equal(t, "octo", me.Login)
}

// TestALabelIsAddedOnce: every way of adding labels to an issue (create,
// PATCH, POST and PUT .../labels, Edit's +label) skips one the issue has,
// case aside, and creates the ones the repository lacks.
func TestALabelIsAddedOnce(t *testing.T) {
	s := start(t, Options{})
	names := func() []string {
		is, err := s.Issue("o/r", 1)
		require.NoError(t, err)
		return is.Labels
	}
	var is ghIssue
	ghJSON(t, s, `{"title":"a","labels":["bug","Bug","ui"]}`, &is, "api", "-X", "POST", "repos/o/r/issues", "--input", "-")
	assert.Equal(t, []string{"bug", "ui"}, names(), "create")

	ghJSON(t, s, `{"labels":["ui","UI","new"]}`, &is, "api", "-X", "PATCH", "repos/o/r/issues/1", "--input", "-")
	assert.Equal(t, []string{"ui", "new"}, names(), "PATCH replaces them")

	var labels []struct{ Name string }
	ghJSON(t, s, `{"labels":["NEW","more"]}`, &labels, "api", "-X", "POST", "repos/o/r/issues/1/labels", "--input", "-")
	assert.Equal(t, []string{"ui", "new", "more"}, names(), "POST adds")

	ghJSON(t, s, `["more","More","bug"]`, &labels, "api", "-X", "PUT", "repos/o/r/issues/1/labels", "--input", "-")
	assert.Equal(t, []string{"more", "bug"}, names(), "PUT replaces them")

	require.NoError(t, s.Edit("o/r", 1, "+label=BUG", "+label=fresh"))
	assert.Equal(t, []string{"more", "bug", "fresh"}, names(), "Edit +label")

	var repoLabels []string
	for _, l := range s.Labels("o/r") {
		repoLabels = append(repoLabels, l.Name)
	}
	assert.Equal(t, []string{"bug", "ui", "new", "more", "fresh"}, repoLabels, "each created once, as first named")
}
