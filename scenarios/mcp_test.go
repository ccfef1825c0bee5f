package scenarios

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpcallMain is the mcpcall program of the scenarios: an MCP client (the
// official SDK's, over mcp.CommandTransport) that runs party mcp as the
// agents would, calls tools and prints what came back.
//
//	mcpcall [flags] TOOL [JSON]   one call
//	mcpcall [flags] -list         the tools, with their schemas
//	mcpcall [flags] -script FILE  one session, a line of FILE a step:
//	                              "call TOOL [JSON]"; "start TOOL [JSON]",
//	                              a call made while the next steps run, and
//	                              "wait", which waits for the calls started
//	                              and prints them in the order they were;
//	                              or "run ARGV…" (a program run between
//	                              two calls, argv split on spaces, no shell)
//
// Flags: -url URL (or @FILE holding it) and -unix SOCKET connect to a
// party mcp serving streamable HTTP instead, with -bearer FILE's token;
// -token FILE runs party mcp with FILE's content as
// PARTY_RUNTIME_TOKEN, -token-value T with T; without either the server
// has none (the operator). -progress asks for progress and prints each
// notification to stderr ("progress N: MESSAGE"); -cancel-on-int cancels
// the call on SIGINT (the server is told, notifications/cancelled);
// -pidfile FILE writes party mcp's pid into FILE.
//
// One call prints its structured result (indented JSON) on stdout and
// exits 0; a tool error prints its text on stderr and exits 1; a protocol
// error exits 2. In a script every call's outcome goes to stdout, "== N
// TOOL ok" or "== N TOOL error" before it.
func mcpcallMain() int {
	fl := flag.NewFlagSet("mcpcall", flag.ContinueOnError)
	tokenFile := fl.String("token", "", "a file holding the runtime token")
	tokenValue := fl.String("token-value", "", "the runtime token")
	progress := fl.Bool("progress", false, "ask for progress; print it on stderr")
	cancelOnInt := fl.Bool("cancel-on-int", false, "cancel the call on SIGINT")
	list := fl.Bool("list", false, "list the tools")
	script := fl.String("script", "", "a file of steps")
	pidFile := fl.String("pidfile", "", "write party mcp's pid into this file")
	url := fl.String("url", "", "connect over streamable HTTP to this URL (a file holding it: @FILE)")
	unix := fl.String("unix", "", "connect over streamable HTTP on this unix socket")
	bearer := fl.String("bearer", "", "a file holding the bearer token for -url or -unix")
	if err := fl.Parse(os.Args[1:]); err != nil {
		return 2
	}
	env := withoutVar(os.Environ(), "PARTY_RUNTIME_TOKEN")
	switch {
	case *tokenFile != "":
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "mcpcall:", err)
			return 2
		}
		env = append(env, "PARTY_RUNTIME_TOKEN="+strings.TrimSpace(string(b)))
	case *tokenValue != "":
		env = append(env, "PARTY_RUNTIME_TOKEN="+*tokenValue)
	}

	ctx := context.Background()
	opts := &sdk.ClientOptions{}
	if *progress {
		opts.ProgressNotificationHandler = func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			fmt.Fprintf(os.Stderr, "progress %v: %s\n", r.Params.Progress, r.Params.Message)
		}
	}
	cmd := exec.Command("party", "mcp")
	cmd.Env = env
	cmd.Stderr = os.Stderr
	var transport sdk.Transport = &sdk.CommandTransport{Command: cmd}
	if *url != "" || *unix != "" {
		t, err := httpTransport(*url, *unix, *bearer)
		if err != nil {
			fmt.Fprintln(os.Stderr, "mcpcall:", err)
			return 2
		}
		transport = t
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "mcpcall", Version: "1"}, opts).Connect(ctx, transport, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpcall: connect:", err)
		return 2
	}
	defer func() { _ = cs.Close() }()
	if *pidFile != "" {
		if err := os.WriteFile(*pidFile, []byte(fmt.Sprintln(cmd.Process.Pid)), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "mcpcall:", err)
			return 2
		}
	}

	if *list {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, "mcpcall:", err)
			return 2
		}
		for _, t := range res.Tools {
			in, _ := json.Marshal(t.InputSchema)
			out, _ := json.Marshal(t.OutputSchema)
			fmt.Printf("%s in=%s out=%s\n", t.Name, in, out)
		}
		return 0
	}
	if *script != "" {
		return runScript(ctx, cs, *script, *progress)
	}
	args := fl.Args()
	if len(args) < 1 || len(args) > 2 {
		fmt.Fprintln(os.Stderr, "usage: mcpcall [-token FILE|-token-value T] [-progress] [-cancel-on-int] TOOL [JSON] | -list | -script FILE")
		return 2
	}
	if *cancelOnInt {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt)
		defer stop()
	}
	res, err := call(ctx, cs, args[0], strings.Join(args[1:], ""), *progress)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpcall:", err)
		return 2
	}
	if res.IsError {
		fmt.Fprintln(os.Stderr, text(res))
		return 1
	}
	fmt.Println(structured(res))
	return 0
}

// call calls tool with the JSON object args ("" for none).
func call(ctx context.Context, cs *sdk.ClientSession, tool, args string, progress bool) (*sdk.CallToolResult, error) {
	p := &sdk.CallToolParams{Name: tool, Arguments: json.RawMessage(`{}`)}
	if args != "" {
		p.Arguments = json.RawMessage(args)
	}
	if progress {
		p.SetProgressToken("mcpcall")
	}
	return cs.CallTool(ctx, p)
}

// runScript runs the steps of file in the session cs.
func runScript(ctx context.Context, cs *sdk.ClientSession, file string, progress bool) int {
	f, err := os.Open(file)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpcall:", err)
		return 2
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	var started []chan string
	outcome := func(n int, tool, args string) string {
		res, err := call(ctx, cs, tool, args, progress)
		switch {
		case err != nil:
			return fmt.Sprintf("== %d %s protocol error\n%v\n", n, tool, err)
		case res.IsError:
			return fmt.Sprintf("== %d %s error\n%s\n", n, tool, text(res))
		}
		return fmt.Sprintf("== %d %s ok\n%s\n", n, tool, structured(res))
	}
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		verb, rest, _ := strings.Cut(line, " ")
		tool, args, _ := strings.Cut(rest, " ")
		switch verb {
		case "", "#":
		case "run":
			argv := strings.Fields(rest)
			c := exec.Command(argv[0], argv[1:]...)
			c.Stdout, c.Stderr = os.Stderr, os.Stderr
			if err := c.Run(); err != nil {
				fmt.Fprintf(os.Stderr, "mcpcall: run %s: %v\n", rest, err)
				return 2
			}
		case "call":
			n++
			fmt.Print(outcome(n, tool, strings.TrimSpace(args)))
		case "start":
			n++
			done := make(chan string, 1)
			started = append(started, done)
			go func(n int) { done <- outcome(n, tool, strings.TrimSpace(args)) }(n)
		case "wait":
			for _, done := range started {
				fmt.Print(<-done)
			}
			started = nil
		default:
			fmt.Fprintf(os.Stderr, "mcpcall: %s: unknown step %q\n", file, line)
			return 2
		}
	}
	return 0
}

// text is the text content of res.
func text(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// structured is res's structured result as indented JSON.
func structured(res *sdk.CallToolResult) string {
	b, err := json.MarshalIndent(res.StructuredContent, "", "  ")
	if err != nil {
		return fmt.Sprintf("(unprintable: %v)", err)
	}
	return string(b)
}

// httpTransport is the SDK's streamable HTTP client transport to url (or
// a file holding it, @FILE), or to the unix socket sock, sending the bearer
// token in the file bearer when there is one.
func httpTransport(url, sock, bearer string) (sdk.Transport, error) {
	if file, ok := strings.CutPrefix(url, "@"); ok {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		url = strings.TrimSpace(string(b))
	}
	base := http.DefaultTransport.(*http.Transport).Clone()
	if sock != "" {
		url = "http://localhost/"
		base.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		}
	}
	var rt http.RoundTripper = base
	if bearer != "" {
		b, err := os.ReadFile(bearer)
		if err != nil {
			return nil, err
		}
		rt = bearerRT{token: strings.TrimSpace(string(b)), next: base}
	}
	return &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: rt}, MaxRetries: -1}, nil
}

// bearerRT sends every request with the bearer token.
type bearerRT struct {
	token string
	next  http.RoundTripper
}

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// withoutVar is environ without the variable name.
func withoutVar(environ []string, name string) []string {
	out := environ[:0:0]
	for _, kv := range environ {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}
