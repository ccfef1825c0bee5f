package scenarios

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdHTTP makes one real HTTP request to a server of party's (the
// supervisor's API) and prints the status code on the first line of
// stdout, then the body:
//
//	http ADDRFILE [-token FILE] [-runtime TOKEN] [-operator NAME] [-until REGEXP] METHOD PATH [BODYFILE]
//
// ADDRFILE holds the unix socket's path (a leading /) or a loopback
// HOST:PORT; -token sends FILE's content as the bearer token, -runtime
// TOKEN as X-Party-Runtime-Token, -operator NAME as X-Party-Operator. -until makes the request again (a GET:
// nothing changes) until what it prints matches REGEXP, for waitLimit.
func cmdHTTP(ts *testscript.TestScript, neg bool, args []string) {
	usage := "usage: http ADDRFILE [-token FILE] [-runtime TOKEN] [-runtime-file FILE] [-operator NAME] [-until REGEXP] METHOD PATH [BODYFILE]"
	if neg || len(args) < 3 {
		ts.Fatalf("%s", usage)
	}
	addr := strings.TrimSpace(ts.ReadFile(args[0]))
	args = args[1:]
	header := http.Header{}
	var until *regexp.Regexp
	for len(args) > 1 && strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "-token":
			header.Set("Authorization", "Bearer "+strings.TrimSpace(ts.ReadFile(args[1])))
		case "-runtime":
			header.Set("X-Party-Runtime-Token", args[1])
		case "-runtime-file":
			header.Set("X-Party-Runtime-Token", strings.TrimSpace(ts.ReadFile(args[1])))
		case "-operator":
			header.Set("X-Party-Operator", args[1])
		case "-until":
			var err error
			until, err = regexp.Compile(args[1])
			ts.Check(err)
		default:
			ts.Fatalf("%s", usage)
		}
		args = args[2:]
	}
	if len(args) < 2 || (until != nil && (args[0] != http.MethodGet || len(args) > 2)) {
		ts.Fatalf("%s", usage)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	base := "http://" + addr
	if strings.HasPrefix(addr, "/") {
		base = "http://party"
		client.Transport = &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", addr)
		}}
	}
	do := func() []byte {
		var body io.Reader
		if len(args) == 3 {
			body = strings.NewReader(ts.ReadFile(args[2]))
		}
		req, err := http.NewRequest(args[0], base+args[1], body)
		ts.Check(err)
		req.Header = header.Clone()
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := client.Do(req)
		ts.Check(err)
		defer resp.Body.Close()
		var out bytes.Buffer
		fmt.Fprintf(&out, "%d\n", resp.StatusCode)
		_, err = io.Copy(&out, resp.Body)
		ts.Check(err)
		return out.Bytes()
	}
	out := do()
	for deadline := time.Now().Add(waitLimit); until != nil && !until.Match(out); out = do() {
		if time.Now().After(deadline) {
			ts.Fatalf("%s %s never answered a match for %q; last answer:\n%s", args[0], args[1], until, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	_, _ = ts.Stdout().Write(out)
}
