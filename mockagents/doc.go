// Package mockagents is the engine of party's mock agents: stand-ins for
// Claude Code, Codex CLI, Gemini CLI and a generic TUI that draw the real
// screens, reproduce the real input quirks, run the real hooks, and answer
// as a small script says. They are built as bin/mock/claude, bin/mock/codex,
// bin/mock/gemini and bin/mock/mockagent; the persona is the program's name
// (anything else is generic), or --persona / PARTY_MOCK_PERSONA.
//
// # Log
//
// Every accepted submission is appended to $PARTY_MOCK_LOG as one JSON line
// {"agent","pane","seq","mode","text","time"}: text is exactly the input
// (pasted and typed bytes, without the submitting Enter); mode is submit,
// queued (taken while busy), steer (codex: Enter while busy) or dialog (an
// answer to a dialog, text is the choice). Writers hold an flock, so
// concurrent mocks never interleave.
//
// # Behaviours (environment, defaulting to the real agents')
//
//	PARTY_MOCK_SCRIPT=FILE        answer script (below)
//	PARTY_MOCK_LOG=FILE           submission log
//	PARTY_MOCK_ALT_SCREEN=0|1     alternate screen (claude: off, codex: on;
//	                              also CLAUDE_CODE_NO_FLICKER=1, codex --no-alt-screen)
//	PARTY_MOCK_TRUST_DIALOG=1     show the trust dialog at start
//	PARTY_MOCK_ENTER_GUARD=100ms  claude: an Enter this soon after a paste is lost
//	                              (0 disables); an Enter in the same read as the
//	                              paste's end is always lost, as in the real one
//	PARTY_MOCK_BURST=0            codex: disable the paste-burst window (3+ chars
//	                              <=8ms apart; an Enter within 120ms is a newline)
//	PARTY_MOCK_NO_ESC_HINT=1      claude: busy line without "esc to interrupt"
//	PARTY_MOCK_TRACE=FILE         log when each completion (Stop hook, codex
//	                              notify, marker) or tagged block was emitted,
//	                              for benchmarks
//
// Hooks are wired as with the real agents: claude reads the hooks of
// ~/.claude/settings.json, ./.claude/settings.json,
// ./.claude/settings.local.json and --settings FILE, and runs its
// UserPromptSubmit, Stop, StopFailure, Notification and SessionStart
// command hooks with the real JSON on stdin, and for write and run its
// PreToolUse and PostToolUse hooks whose matcher selects the tool (Write,
// Bash): a PreToolUse hook that prints permissionDecision "deny" or exits 2
// stops the tool, and the screen says so. The session id is
// $PARTY_MOCK_SESSION_ID, else random; codex runs the
// program of -c notify=[...] with the turn's JSON as its last argument.
//
// # Replay
//
// --replay FILE.cast plays a recorded agent (party record): the recorded
// output with its pacing (--speed N, --no-delay), and at each recorded
// input it waits for a submission that matches it, loosely by default
// (whitespace and party's marker nonce do not count) or byte for byte
// with --exact; the recorded marker nonce is replaced by the new one in
// what follows, so talk --wait replays too. A submission that does not match is reported on screen,
// on stderr and in the log (mode "diverged") with the event where the
// replay diverged.
//
// # Script
//
//	# comment
//	on /regexp/            a rule; also: on "substring", on *
//	  think 2s             busy for a duration (Go duration or bare ms)
//	  say text $1\n...     print answer text; $0..$9 are the rule's regexp
//	                       groups ($0 the whole prompt), \n \t \\ escapes
//	  echo                 print the prompt back verbatim
//	  marker               print party's completion marker if the prompt asks for one
//	  write PATH TEXT      write a file (relative to the working directory)
//	  permission CMD       ask permission to run CMD; No ends the turn
//	  fail TYPE            end the turn with an API error (claude: StopFailure)
//	  crash N              exit with status N at once
//	  hang                 stay busy forever
//
// The first rule that matches the submitted text runs. Without a script,
// or when no rule matches, the answer is: think 300ms, then one line
// quoting the start of the prompt. A script error names FILE:LINE:COL and
// the mock exits 2.
package mockagents
