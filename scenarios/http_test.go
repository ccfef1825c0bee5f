package scenarios

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdHTTP makes one real HTTP request to a server of party's (the
// supervisor's API) and prints the status code on the first line of
// stdout, then the body:
//
//	http ADDRFILE [-token FILE] [-runtime TOKEN] METHOD PATH [BODYFILE]
//
// ADDRFILE holds the unix socket's path (a leading /) or a loopback
// HOST:PORT; -token sends FILE's content as the bearer token, -runtime
// TOKEN as X-Party-Runtime-Token.
func cmdHTTP(ts *testscript.TestScript, neg bool, args []string) {
	usage := "usage: http ADDRFILE [-token FILE] [-runtime TOKEN] [-runtime-file FILE] METHOD PATH [BODYFILE]"
	if neg || len(args) < 3 {
		ts.Fatalf("%s", usage)
	}
	addr := strings.TrimSpace(ts.ReadFile(args[0]))
	args = args[1:]
	header := http.Header{}
	for len(args) > 1 && strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "-token":
			header.Set("Authorization", "Bearer "+strings.TrimSpace(ts.ReadFile(args[1])))
		case "-runtime":
			header.Set("X-Party-Runtime-Token", args[1])
		case "-runtime-file":
			header.Set("X-Party-Runtime-Token", strings.TrimSpace(ts.ReadFile(args[1])))
		default:
			ts.Fatalf("%s", usage)
		}
		args = args[2:]
	}
	if len(args) < 2 {
		ts.Fatalf("%s", usage)
	}
	var body io.Reader
	if len(args) == 3 {
		body = strings.NewReader(ts.ReadFile(args[2]))
	}
	client := &http.Client{Timeout: 10 * time.Second}
	base := "http://" + addr
	if strings.HasPrefix(addr, "/") {
		base = "http://party"
		client.Transport = &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", addr)
		}}
	}
	req, err := http.NewRequest(args[0], base+args[1], body)
	ts.Check(err)
	req.Header = header
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
	_, _ = ts.Stdout().Write(out.Bytes())
}
