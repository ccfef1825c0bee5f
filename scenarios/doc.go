// Package scenarios is party's end-to-end suite: testscript files in
// testdata/<area>_<case>.txtar run the real party CLI and the mock agents
// against real tmux, each scenario on its own private server (-L) that is
// killed when the scenario ends. tmux missing is a failure, never a skip.
//
// $GOLDEN is the golden/ directory: a cast kept in golden/transcripts
// starts a recorded agent in one line,
//
//	exec party start --pane 'claude=mockagent --replay '$GOLDEN'/transcripts/x.cast'
//
// Besides testscript's built-ins, scenarios have these commands:
//
//	tmux ARGS...                 tmux on the scenario's server
//	screen TARGET                print the screen of a pane (id or role) to stdout
//	waitscreen TARGET REGEXP     wait until the pane's screen matches
//	waitidle TARGET              wait until the agent's turn ended, by its own events (the
//	                             turn of the last text party typed in), then its screen is
//	                             not busy; "! waitscreen ROLE 'esc to interrupt'" passes
//	                             before the agent even turned busy, so it is not used
//	waitfor REGEXP CMD ARGS...   run CMD until its stdout matches
//	mocklog count N              wait until the mock log has N entries, fail if it has more
//	mocklog text I FILE [CHANGE...]
//	                             entry I (from 0) holds exactly the bytes of FILE, after
//	                             the changes a real agent makes to its input: tabs4 (each
//	                             tab becomes 4 spaces), trim (leading and trailing
//	                             whitespace go), trimend (trailing whitespace goes)
//	mocklog is I TEXT            entry I holds exactly TEXT
//	mocklog field I KEY VALUE    entry I has KEY (agent, mode, pane) equal to VALUE
//	mocklog set FILE [SEP]       the texts are exactly the lines of FILE, in any order;
//	                             with SEP ('\n\n') an entry may hold several joined by SEP
//	mocklog each FILE [SEP]      every line of FILE arrives at least once, and nothing else
//	mocklog none                 the mock log has no entries
//	gen crlf|lines100|kb100|kb600 FILE
//	                             write a generated text to FILE and what must arrive to
//	                             FILE.want (kb600 is past the 512 KB a paste may hold)
//	golden NAME                  stdout, normalized, equals golden/NAME (-update rewrites)
//	fakemodel start [SCRIPT]     start the fake model server (package mockagents/fakemodel)
//	                             in the test process, scripted by SCRIPT, logging to
//	                             $PARTY_MOCK_LOG; sets $FAKEMODEL_URL; stopped at the end
//	fakegithub start|stop|resume|edit|show|log|hidegh ...
//	                             a fake GitHub REST API over TLS in the test process for the
//	                             real gh, pointed at by GH_HOST and SSL_CERT_FILE (see
//	                             cmdFakeGitHub); stopped at the end
//	http ADDRFILE [-token FILE] [-runtime TOKEN] METHOD PATH [BODYFILE]
//	                             one real HTTP request to the unix socket or loopback
//	                             HOST:PORT that ADDRFILE holds; prints the status, then
//	                             the body
//	accept NAME TRIGGERS SETTINGS [MUST-NOT-DELIVER-ID...]
//	                             count an acceptance run (countArrivals): each trigger of
//	                             TRIGGERS (party trigger list --json) against its envelopes
//	                             in $PARTY_MOCK_LOG; print the figures with SETTINGS (party
//	                             config show --json), the agents' versions, the date and
//	                             the cores as JSON, also to $ACCEPT_FIGURES and, when the
//	                             test process has $PARTY_ACCEPT_RESULTS, to that
//	                             directory's NAME.json; fail on a trigger lost, doubled or
//	                             open, a text of no trigger arriving, or under 99% acked
//	sqlite FILE SQL...           run SQL statements on the SQLite database FILE (made when
//	                             missing) with the driver party uses
//	sshd start|stop|cut|silent   start a real OpenSSH server (Debian's openssh-server; its
//	                             absence is a failure) on a free loopback port, with a host
//	                             key and a user key made by ssh-keygen, whose sessions are a
//	                             second host: their own HOME, XDG dirs, runtime and tmux
//	                             dirs, tmux socket and mock log under $REMOTE ($WORK/remote),
//	                             the scenario's PATH (the same party); writes Host remote into
//	                             $HOME/.ssh/config and sets $SSHD_PORT, $REMOTE,
//	                             $REMOTE_SOCK and $REMOTE_TMPDIR; stop ends the server (connections are then
//	                             refused); cut stops it and kills its connections (SIGKILL of
//	                             each connection's sshd: the clients' links break at once,
//	                             the programs they ran go on); at the end the remote's tmux server, the server
//	                             and every process its sessions started are killed; silent
//	                             listens on a loopback port ($SILENT_PORT) that takes
//	                             connections and never answers (a hung host)
//	realagent KIND...            seed the real agents (claude, codex, gemini) into $HOME for
//	                             $WORK and $FAKEMODEL_URL, add their environment, and put the
//	                             pinned agents (make agents) first on PATH
//
// and these programs, besides party and the mock agents:
//
//	ssh ARGS...                  the real ssh with -F $HOME/.ssh/config: OpenSSH reads the
//	                             config of the home the password database names, never
//	                             $HOME's, and a scenario's home is its own
//	mcpcall [-token FILE|-token-value T] [-url URL|@FILE|-unix SOCK [-bearer FILE]]
//	        [-progress] [-cancel-on-int] [-pidfile FILE] TOOL [JSON] | -list | -script FILE
//	                             an MCP client (the official SDK's, over stdio) running
//	                             party mcp, or over streamable HTTP to a party mcp --http
//	                             or --socket: one tool call (its structured result on
//	                             stdout, a tool error on stderr and exit 1), the tools with
//	                             their schemas, or one session of steps (call, start, wait,
//	                             run); see mcpcallMain
//
// mocklog reads the mock agents' log and the fake model's alike, and
// counts only submissions: the fake model's side requests (mode side:
// titles, routers) and tool-result continuations (mode continue) are
// left out.
//
// # Real agents
//
// A scenario named real_<agent>_<case> drives the pinned REAL agents
// (package mockagents/realagent; `make agents` installs them, and their
// absence is a failure): fakemodel start, realagent KIND..., then party
// as usual, with the fake model's log as the oracle. Every process such a
// scenario starts carries $PARTY_TEST_TOKEN, and whatever still carries it
// when the tmux server is gone (Codex's app-server daemon, an agent that
// ignored the hang-up) is killed.
package scenarios
