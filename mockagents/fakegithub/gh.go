package fakegithub

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
)

// Gh is the gh CLI's `gh api` in process: it answers the calls party's
// GitHub store makes (gh api [-X METHOD] PATH [--input -], gh api
// --paginate PATH) as the real gh answers them from a Server, so the
// store's logic runs in the -short tests without a gh process per call.
// What the real gh does, measured against this server (the fidelity test
// runs both, in the full run):
//
//   - the request goes to https://GH_HOST/api/v3/PATH, trusting only
//     SSL_CERT_FILE, with "Authorization: token GH_ENTERPRISE_TOKEN" (no
//     header when the token is unset or empty), --input's bytes as a JSON
//     body;
//   - a 2xx answer's body is stdout, exit 0; --paginate follows the Link
//     header's rel="next" and prints each page's body, one after another;
//   - a 4xx/5xx answer's body is stdout too, stderr is "gh: MESSAGE (HTTP
//     NNN)" (MESSAGE: the body's message), exit 1;
//   - a request that reaches no server prints Go's error on stderr, `Get
//     "URL": dial tcp …: connection refused`, exit 1.
//
// Any other call is exit 1 with "unknown" on stderr, as gh refuses what
// it does not know.
type Gh struct {
	// Env is gh's environment: Server.Env's entries (GH_HOST,
	// GH_ENTERPRISE_TOKEN, SSL_CERT_FILE) are read, the others ignored.
	Env []string
}

// Run runs gh with args, as the real gh would against the server Env
// points at. err is only the caller's ctx ending.
func (g Gh) Run(ctx context.Context, args []string, stdin []byte) (stdout, stderr []byte, exit int, err error) {
	call, err := parseAPI(args)
	if err != nil {
		return nil, []byte(err.Error() + "\n"), 1, nil
	}
	host, token, caFile := g.get("GH_HOST"), g.get("GH_ENTERPRISE_TOKEN"), g.get("SSL_CERT_FILE")
	if host == "" {
		return nil, []byte("fakegithub.Gh: no GH_HOST: the real github.com is never called\n"), 1, nil
	}
	client, err := newClient(caFile)
	if err != nil {
		return nil, []byte(err.Error() + "\n"), 1, nil
	}
	defer client.CloseIdleConnections()
	if call.fields != nil && !call.input {
		stdin, _ = json.Marshal(call.fields) // strings only: cannot fail
		call.input = true
	}
	var out bytes.Buffer
	next := "https://" + host + "/api/v3/" + strings.TrimPrefix(call.path, "/")
	for next != "" {
		req, rerr := http.NewRequestWithContext(ctx, call.method, next, nil)
		if rerr != nil {
			return nil, []byte(rerr.Error() + "\n"), 1, nil
		}
		if call.input {
			req.Body = io.NopCloser(bytes.NewReader(stdin))
			req.ContentLength = int64(len(stdin))
			req.Header.Set("Content-Type", "application/json; charset=utf-8")
		}
		if token != "" {
			req.Header.Set("Authorization", "token "+token)
		}
		resp, rerr := client.Do(req)
		if rerr != nil {
			if ctx.Err() != nil {
				return nil, nil, -1, ctx.Err()
			}
			return out.Bytes(), []byte(rerr.Error() + "\n"), 1, nil
		}
		body, rerr := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if rerr != nil {
			return out.Bytes(), []byte(rerr.Error() + "\n"), 1, nil
		}
		out.Write(body)
		if resp.StatusCode >= 400 {
			var m struct {
				Message string `json:"message"`
			}
			_ = json.Unmarshal(body, &m)
			return out.Bytes(), fmt.Appendf(nil, "gh: %s (HTTP %d)\n", m.Message, resp.StatusCode), 1, nil
		}
		next = ""
		if call.paginate {
			next = nextLink(resp.Header.Get("Link"))
		}
	}
	return out.Bytes(), nil, 0, nil
}

func (g Gh) get(key string) string {
	v := ""
	for _, kv := range g.Env {
		if x, ok := strings.CutPrefix(kv, key+"="); ok {
			v = x
		}
	}
	return v
}

// apiCall is a gh api command line.
type apiCall struct {
	method, path    string
	input, paginate bool
	fields          map[string]string // -f KEY=VALUE
}

// parseAPI reads the gh api command lines party runs.
func parseAPI(args []string) (apiCall, error) {
	c := apiCall{}
	if len(args) == 0 || args[0] != "api" {
		return c, fmt.Errorf("unknown command %q for gh (fakegithub.Gh knows gh api only)", strings.Join(args, " "))
	}
	for i := 1; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-X" || a == "--method":
			if i+1 == len(args) {
				return c, errors.New("flag needs an argument: " + a)
			}
			i++
			c.method = args[i]
		case a == "--input":
			if i+1 == len(args) || args[i+1] != "-" {
				return c, errors.New("fakegithub.Gh: --input takes - (stdin) only")
			}
			i++
			c.input = true
		case a == "-f" || a == "--raw-field":
			if i+1 == len(args) || !strings.Contains(args[i+1], "=") {
				return c, errors.New("flag needs an argument KEY=VALUE: " + a)
			}
			i++
			k, v, _ := strings.Cut(args[i], "=")
			if c.fields == nil {
				c.fields = map[string]string{}
			}
			c.fields[k] = v
		case a == "--paginate":
			c.paginate = true
		case strings.HasPrefix(a, "-"):
			return c, fmt.Errorf("unknown flag: %s", a)
		case c.path != "":
			return c, fmt.Errorf("accepts 1 arg(s), received 2: %q", a)
		default:
			c.path = a
		}
	}
	if c.path == "" {
		return c, errors.New("accepts 1 arg(s), received 0")
	}
	switch {
	case c.method == "" && (c.fields != nil || c.input):
		c.method = "POST" // gh's default once there is a body
	case c.method == "":
		c.method = "GET"
	case c.method == "GET" && c.fields != nil:
		return c, errors.New("fakegithub.Gh: -f on a GET is a query for gh; not supported")
	}
	return c, nil
}

// newClient is an HTTPS client that trusts only the CA in caFile, as gh
// does with SSL_CERT_FILE; its connections live for one Run, as a gh
// process's do.
func newClient(caFile string) (*http.Client, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("SSL_CERT_FILE: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("SSL_CERT_FILE %s: no certificate", caFile)
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}, nil
}

var nextRE = regexp.MustCompile(`<([^>]*)>;\s*rel="next"`)

// nextLink is the rel="next" URL of a Link header, "" for none.
func nextLink(link string) string {
	if m := nextRE.FindStringSubmatch(link); m != nil {
		return m[1]
	}
	return ""
}
