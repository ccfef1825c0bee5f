package scenarios

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// webhooks are the receivers of each script.
var webhooks sync.Map // *testscript.TestScript -> *webhookReceiver

// webhookReceiver is a local HTTP server that keeps every request's body.
type webhookReceiver struct {
	srv    *http.Server
	mu     sync.Mutex
	bodies []string
}

func (r *webhookReceiver) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.bodies...)
}

// cmdWebhook is a local webhook receiver (loopback, any path):
//
//	webhook start          listen; $WEBHOOK_URL is its URL
//	webhook wait REGEXP [N]  wait until N (1) received bodies match
//	webhook count N        exactly N requests were received
//	webhook show           print the bodies, one a line
//
// A request that is not a POST of application/json is answered 400 and
// kept as "BAD …".
func cmdWebhook(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: webhook start|wait REGEXP [N]|count N|show")
	}
	if args[0] == "start" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		ts.Check(err)
		r := &webhookReceiver{}
		r.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			b, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
			body := strings.TrimSpace(string(b))
			ok := req.Method == http.MethodPost && req.Header.Get("Content-Type") == "application/json" && json.Valid(b)
			if !ok {
				body = fmt.Sprintf("BAD %s %s %s", req.Method, req.Header.Get("Content-Type"), body)
			}
			r.mu.Lock()
			r.bodies = append(r.bodies, body)
			r.mu.Unlock()
			if !ok {
				w.WriteHeader(http.StatusBadRequest)
			}
		})}
		go func() { _ = r.srv.Serve(ln) }()
		webhooks.Store(ts, r)
		ts.Defer(func() {
			webhooks.Delete(ts)
			_ = r.srv.Close()
		})
		ts.Setenv("WEBHOOK_URL", "http://"+ln.Addr().String()+"/party")
		return
	}
	v, ok := webhooks.Load(ts)
	if !ok {
		ts.Fatalf("webhook %s: not started", args[0])
	}
	r := v.(*webhookReceiver)
	switch {
	case args[0] == "wait" && (len(args) == 2 || len(args) == 3):
		re, err := regexp.Compile(args[1])
		ts.Check(err)
		want := 1
		if len(args) == 3 {
			want, err = strconv.Atoi(args[2])
			ts.Check(err)
		}
		deadline := time.Now().Add(waitLimit)
		for {
			n := 0
			for _, b := range r.all() {
				if re.MatchString(b) {
					n++
				}
			}
			if n >= want {
				return
			}
			if time.Now().After(deadline) {
				ts.Fatalf("%d webhook bodies matched %q, want %d; received:\n%s", n, args[1], want, strings.Join(r.all(), "\n"))
			}
			time.Sleep(20 * time.Millisecond)
		}
	case args[0] == "count" && len(args) == 2:
		if got := fmt.Sprint(len(r.all())); got != args[1] {
			ts.Fatalf("webhook received %s requests, want %s:\n%s", got, args[1], strings.Join(r.all(), "\n"))
		}
	case args[0] == "show":
		fmt.Fprintln(ts.Stdout(), strings.Join(r.all(), "\n"))
	default:
		ts.Fatalf("usage: webhook start|wait REGEXP [N]|count N|show")
	}
}
