package scenarios

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/partyhq/party/mockagents/fakegithub"
)

// fakeGitHubs are the scenarios' fake GitHub servers, one per script at
// most, closed by the script's Defer.
var fakeGitHubs sync.Map // *testscript.TestScript -> *fakegithub.Server

// cmdFakeGitHub runs a fake GitHub REST API (package
// mockagents/fakegithub) in the test process, for the real gh that party
// runs:
//
//	fakegithub start [REPO...]        start it (with REPOs, only those exist); set GH_HOST,
//	                                  GH_ENTERPRISE_TOKEN, SSL_CERT_FILE, GH_CONFIG_DIR,
//	                                  GH_NO_UPDATE_NOTIFIER, GH_PROMPT_DISABLED and
//	                                  FAKEGITHUB_LOG (the request log, $WORK/github.log)
//	fakegithub stop                   close the listener: gh finds nobody (offline)
//	fakegithub resume                 listen again, same address and contents
//	fakegithub edit REPO N KEY=VALUE...  change issue N behind party's back (title, body,
//	                                  state, labels, +label, -label, milestone,
//	                                  assignees, comment (by someone-on-github),
//	                                  mycomment (by the token's user, as party))
//	fakegithub show REPO [N]          print the repository (or issue N): labels with
//	                                  colors, milestones, issues with labels and comments
//	fakegithub log [METHOD]           print the requests: METHOD PATH STATUS BODY
//	fakegithub hidegh                 take every directory holding gh off PATH
//
// The server is stopped at the end of the scenario.
func cmdFakeGitHub(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 {
		ts.Fatalf("usage: fakegithub start|stop|resume|edit|show|log|hidegh ...")
	}
	if neg && args[0] != "edit" {
		ts.Fatalf("fakegithub %s: no ! form", args[0])
	}
	if args[0] == "start" {
		if _, ok := fakeGitHubs.Load(ts); ok {
			ts.Fatalf("fakegithub: already started")
		}
		dir := ts.MkAbs("fakegithub")
		ts.Check(os.MkdirAll(dir, 0o700))
		srv, err := fakegithub.Start(fakegithub.Options{Dir: dir, LogPath: ts.MkAbs("github.log"), Repos: args[1:]})
		ts.Check(err)
		fakeGitHubs.Store(ts, srv)
		ts.Defer(func() {
			fakeGitHubs.Delete(ts)
			if err := srv.Close(); err != nil {
				ts.Logf("fakegithub close: %v", err)
			}
		})
		for _, kv := range srv.Env() {
			k, v, _ := strings.Cut(kv, "=")
			ts.Setenv(k, v)
		}
		ts.Setenv("FAKEGITHUB_LOG", srv.LogPath())
		return
	}
	if args[0] == "hidegh" {
		var keep []string
		for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
			if _, err := os.Stat(filepath.Join(dir, "gh")); err != nil {
				keep = append(keep, dir)
			}
		}
		ts.Setenv("PATH", strings.Join(keep, string(os.PathListSeparator)))
		return
	}
	v, ok := fakeGitHubs.Load(ts)
	if !ok {
		ts.Fatalf("fakegithub %s: run fakegithub start first", args[0])
	}
	srv := v.(*fakegithub.Server)
	switch args[0] {
	case "stop":
		ts.Check(srv.Stop())
	case "resume":
		ts.Check(srv.Resume())
	case "edit":
		if len(args) < 4 {
			ts.Fatalf("usage: fakegithub edit REPO N KEY=VALUE...")
		}
		n, err := strconv.Atoi(args[2])
		ts.Check(err)
		err = srv.Edit(args[1], n, args[3:]...)
		if neg != (err != nil) {
			ts.Fatalf("fakegithub edit: unexpected result: %v", err)
		}
	case "show":
		switch len(args) {
		case 2:
			_, _ = ts.Stdout().Write([]byte(srv.Describe(args[1])))
		case 3:
			n, err := strconv.Atoi(args[2])
			ts.Check(err)
			is, err := srv.Issue(args[1], n)
			ts.Check(err)
			miles := map[int]string{}
			for _, m := range srv.Milestones(args[1]) {
				miles[m.Number] = m.Title
			}
			_, _ = ts.Stdout().Write([]byte(fakegithub.DescribeIssue(is, miles, srv.Comments(args[1], n))))
		default:
			ts.Fatalf("usage: fakegithub show REPO [N]")
		}
	case "log":
		entries, err := fakegithub.ReadLog(srv.LogPath())
		ts.Check(err)
		for _, e := range entries {
			if len(args) > 1 && e.Method != args[1] {
				continue
			}
			_, _ = fmt.Fprintf(ts.Stdout(), "%s %s %d %s\n", e.Method, e.Path, e.Status, e.Body)
		}
	default:
		ts.Fatalf("fakegithub: unknown subcommand %q", args[0])
	}
}
