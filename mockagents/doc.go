// Package mockagents is the engine of party's mock agents: stand-ins for
// Claude Code, Codex CLI, Gemini CLI and a generic TUI that draw the real
// screens, reproduce the real input quirks, run the real hooks, and answer
// as a small script says. They are built as bin/mock/claude, bin/mock/codex,
// bin/mock/gemini and bin/mock/mockagent; the persona is the program's name
// (anything else is generic), or --persona / PARTY_MOCK_PERSONA.
//
// One engine (engine.go: the loop and the start; input.go: keys, pastes
// and Enter; turn.go: the script's steps; render.go: the screen) runs
// every persona; what one agent does its own way, and the state it keeps
// for it, is its persona type's: claude (claude.go: Stop-hook progress,
// prompt ids, the session transcript), codex (codex.go: the paste burst,
// the thread, the rollout), gemini (gemini.go: the slow start, shell
// mode, the boxes; geminichat.go: the chat file) and generic (persona.go, which also holds the persona
// interface and the defaults the others start from). The script language
// is package mockagents/script, the log format mockagents/mocklog.
//
// # Log
//
// Every accepted submission is appended to $PARTY_MOCK_LOG as one JSON line
// {"agent","pane","seq","mode","text","time"}: text is exactly the input
// (pasted and typed bytes, without the submitting Enter); mode is submit,
// queued (taken while busy, or while gemini initializes), steer (codex:
// Enter while busy), dialog (an answer to a dialog, text is the choice),
// shell (a ! command that ran, text is what ran) or command (a slash
// command or claude's exit word the agent took, text as typed). A submit
// is written when the text goes to the model: after the hooks the agent
// runs first (claude's UserPromptSubmit, gemini's BeforeAgent), so an
// agent killed while they run logged nothing, as the real one sent
// nothing (Claude Code 2.1.197); the others when taken. Writers
// hold an flock, so concurrent mocks never interleave. The format is
// package mockagents/mocklog's, which the fake model server writes too.
//
// # Screens
//
// Each persona draws what the real agent draws (docs/agents-reference.md §2):
//
//   - claude: input box rule / "❯"+U+00A0 / rule / "? for shortcuts · ←
//     for agents"; a fresh session's empty input shows a dim Try "…". Busy:
//     "✢ Skedaddling…" (glyph · ✢ ✳ ✶ ✻ ✽ *, a random verb, "…"), no
//     parenthesis until the first token or ParenAfter, then "(16s · ↓ 8
//     tokens)", "(running stop hooks… 0/2 · 4s)" while Stop hooks run, and
//     "esc to interrupt" in the footer. History: "❯ text" (plain space),
//     answers "● text", a finished turn "✻ Sautéed for 6s" (random verb),
//     errors "● API Error: 500 …". A queued message shows as "  ❯ text"
//     above the box, with the dim "Press up to edit queued messages" in the
//     input; Up takes the queue back into the input. The permission dialog
//     replaces the box and the spinner: " Do you want to proceed?",
//     " ❯ 1. Yes", "2. Yes, and always allow …", "3. No", "Esc to cancel ·
//     Tab to amend".
//   - codex: "› Ask Codex to do anything"; busy "• Working (1s • esc to
//     interrupt)" alternating with "◦ Working (…)"; "› text" echoes, "•"
//     answers, "Worked for 3s • 12:05", "■ …" errors; Tab while busy queues
//     ("• Queued follow-up inputs" / "↳ text"), Enter while busy steers (the
//     turn starts over on the new text). The approval prompt replaces the
//     busy line and the input: "Would you like to run the following
//     command?", "Environment: local", "Reason: …", "$ cmd", "› 1. Yes,
//     proceed (y)", "2. Yes, and don't ask again … (p)", "3. No, and tell
//     Codex … (esc)", "Press enter to confirm or esc to cancel".
//   - gemini: " >   Type your message or @path/to/file" between a rule and
//     the footer (workspace … sandbox … /model); busy " ⠸ Thinking... (esc
//     to cancel, 1s)", after a minute "1m 4s"; "  Queued (press ↑ to
//     edit):" above the spinner, the queue merged into one prompt joined by
//     a blank line; " > text" echoes, "✦ text" answers with a two-space
//     continuation. Dialogs are boxes (╭│╰) with "● 1." on the selected
//     item and hide the input and the spinner: "Allow execution of
//     [Shell]?" (Allow once / Allow for this session / No, suggest changes
//     (esc)), the trust dialog, the auth dialog ("● 2. Use Gemini API Key")
//     and the "Enter Gemini API Key" text box. An input starting with / (one
//     word) or whose last word holds @ opens a completion menu under the
//     input; Enter picks its highlighted item (a command runs, a path is put
//     into the input, "foo@" becomes "foo@codebase_investigator "), Tab
//     completes, Esc closes it; a space after the word: no menu. A paste of
//     more than 5 lines (500 chars) becomes "[Pasted Text: N lines]" after
//     0.5 s. One Esc leaves the input alone, Esc Esc clears it.
//
// Every persona: Esc during a turn interrupts it with no hook or notify
// (claude prints Interrupted and puts the prompt back into the input, codex
// "■ Conversation interrupted", gemini "ℹ Request cancelled."); codex and
// gemini trim the submitted text, claude trims its end and makes each tab
// four spaces (the log keeps it as typed).
//
// Ctrl-U (PARTY_MOCK_LINE_KILL) deletes from the cursor to the start of
// its line, as the real ones do: at a line start claude and codex delete
// the newline before it (N lines take 2N-1 presses), gemini nothing (it
// never joins lines); a paste shown as a placeholder goes in one press.
// The cursor is at the end of the input, except after codex refused a
// command (then it is before it, and Ctrl-U deletes nothing until Ctrl-E
// takes the cursor to the end).
//
// # Input quirks (measured on the pinned agents; each one a switch below)
//
//   - claude, ! (PARTY_MOCK_BANG): an input starting with ! is bash mode
//     (the input shows "! cmd", footer "! for shell mode"); Enter runs the
//     rest, every line of it, with sh -c in the working directory and
//     prints "! cmd" and "  ⎿  output" ("(Bash completed with no
//     output)"); then the model gets "<bash-input>cmd</bash-input>\n
//     <bash-stdout>…</bash-stdout><bash-stderr></bash-stderr>" as a turn
//     of its own (no echo, no UserPromptSubmit; its Stop runs). A space
//     before the ! makes a prompt, sent with the space.
//   - claude, / (PARTY_MOCK_SLASH): while the input is one word starting
//     with / the command menu takes the footer's place ("/usage (cost)
//     Show session cost, …"; none: `No commands match "/word"`) and Enter
//     runs its highlighted command. /cost (or /usage) opens the settings
//     panel ("Settings  Status   Config   Usage   Stats", "Total cost: …",
//     "Esc to cancel") in place of the input; it swallows every key until
//     Esc, then "❯ /usage" / "⎿  Settings dialog dismissed". An unknown
//     /word prints "● Unknown command: /word" and clears the input; /exit
//     and /quit quit. A space before the /, or a path (/usr/bin), makes a
//     prompt.
//   - claude, exit (PARTY_MOCK_CLAUDE_EXIT): a bare exit, quit or :q
//     (whitespace around it does not count) quits with status 0.
//   - claude and codex, @ and $ (PARTY_MOCK_MENUS): a last word starting
//     with @ opens a file menu (claude "+ README.md" in the footer's place,
//     codex a popup under the input ending "enter/tab insert · esc close
//     · ↑/↓ select · ←/→ filter"); Enter picks the file instead of
//     submitting (claude "@README.md ", codex the bare "README.md "). A
//     codex last word $lowercase opens the skill popup ($im → "$imagegen
//     "; none: "no matches", Enter does nothing); $5, $HOME do not. A space
//     after the word: no menu.
//   - claude and gemini, \ (PARTY_MOCK_BACKSLASH): Enter after a trailing
//     \ removes the \ and inserts a newline instead of submitting; a space
//     after the \ submits it.
//   - codex, ! and / (PARTY_MOCK_BANG, PARTY_MOCK_SLASH): !cmd runs in a
//     local shell, no approval, no model request ("• You ran cmd", "  │
//     line 2", "  └ output", "Worked for …"); /quit and /exit quit; an
//     unknown /word is refused ("• Unrecognized command '/word'. Type "/"
//     for a list of supported commands.") and stays in the input with the
//     cursor before it: Ctrl-U clears nothing and the next text is put in
//     front of it. A space before the ! or / makes a prompt (sent trimmed).
//   - gemini, / (PARTY_MOCK_SLASH): a known command runs, trimmed first (a
//     space before the / does not count): /help prints the help box,
//     /quit and /exit quit; an unknown /word is a prompt.
//   - gemini, slow start (PARTY_MOCK_GEMINI_INIT, on while the start delay
//     lasts, without start dialogs): the idle prompt is up at once. For the
//     first third of the delay (at most 0.5 s) keys wait, unseen; then they
//     are read one by one, as keys, not as a paste: Enter is lost, a ? opens
//     the shortcuts help (" Shortcuts See /help for more", until Esc) and
//     takes the input so far with it, a ! in an empty (or blank) input
//     switches shell mode ("  shell mode enabled (esc to disable)", " !
//     Type your shell command"). For the next third (at most 0.5 s) a paste
//     is taken but an Enter is lost. For the rest of the delay what is
//     submitted is queued ("ℹ Initializing... Prompts will be queued.") and
//     sent once ready, merged; in shell mode it runs as a command (" $ cmd"
//     and a box "✓  Shell Command cmd", or "x  …" with "Command exited with
//     code N."). Shell mode stays on until Esc. (Measured on the real one,
//     pasting as its prompt first showed: "why? !touch EARLY" + Enter left
//     the help and "touch EARLY" in shell mode, or ran it; 0.5 s later a
//     paste was taken and its Enter lost; 1 s later it was queued and sent
//     intact.)
//
// # Behaviours (environment, defaulting to the real agents')
//
// Flags take 1 (on) or 0 (off); durations a Go duration or bare
// milliseconds.
//
//	PARTY_MOCK_SCRIPT=FILE        answer script (below)
//	PARTY_MOCK_LOG=FILE           submission log
//	PARTY_MOCK_TRACE=FILE         log when each completion (Stop hook, codex
//	                              notify, marker) or tagged block was emitted,
//	                              for benchmarks
//	PARTY_MOCK_ALT_SCREEN=0|1     alternate screen (claude: off, codex: on;
//	                              also CLAUDE_CODE_NO_FLICKER=1, codex --no-alt-screen)
//	PARTY_MOCK_TRUST_DIALOG=1     the trust dialog at start (gemini: boxed)
//	PARTY_MOCK_START_DELAY=300ms  the agent is ready only after this (gemini
//	                              300ms, others 0; the real gemini takes
//	                              4-10 s); the prompt is drawn and keys are
//	                              read then, except gemini's (GEMINI_INIT)
//	PARTY_MOCK_ENTER_GUARD=100ms  claude: an Enter this soon after a paste is
//	                              lost (0 disables); an Enter in the same read
//	                              as the paste's end is always lost, as in the
//	                              real one
//	PARTY_MOCK_NO_ESC_HINT=1      claude: no "esc to interrupt" in the footer
//	PARTY_MOCK_CLAUDE_PAREN_AFTER=15s  claude: the busy line has no
//	                              parenthesis this long (or until the first
//	                              answer text); 0 shows it at once
//	PARTY_MOCK_CLAUDE_TRY=1       claude: a fresh session shows a dim Try "…" in
//	                              its input (the real one, seeded as the suite
//	                              seeds it, shows none: golden/screens)
//	PARTY_MOCK_CLAUDE_BATCH=0     claude: queued messages go one turn each
//	                              instead of together as one turn (one
//	                              UserPromptSubmit per message, each with
//	                              its prompt_id, one Stop with the last)
//	PARTY_MOCK_CLAUDE_ESC_RESTORE=0  claude: Esc does not put the prompt back
//	PARTY_MOCK_NOTIFY_DELAY=300ms claude: the permission Notification this
//	                              long after the dialog opened (real ~6.4s);
//	                              PermissionRequest runs at once
//	PARTY_MOCK_CLAUDE_PERMISSION_HOOK=0  claude: no PermissionRequest hook
//	                              runs (a Claude Code without it): a dialog
//	                              answered before the Notification leaves no
//	                              hook at all
//	PARTY_MOCK_BURST=0            codex: disable the paste-burst window (3+ chars
//	                              <=8ms apart; an Enter within 120ms is a newline)
//	PARTY_MOCK_CODEX_BLINK=0      codex: the busy line is always "•"
//	PARTY_MOCK_CODEX_ALL_INPUTS=0 codex: notify's input-messages holds only
//	                              the turn's messages, not the whole thread's
//	PARTY_MOCK_MENUS=0            no @ or $ menus (claude, codex) and no / or
//	                              @ menus (gemini); also PARTY_MOCK_GEMINI_MENUS
//	PARTY_MOCK_GEMINI_MERGE=0     gemini: queued messages go one turn each
//	PARTY_MOCK_GEMINI_AUTH=1      gemini: the auth dialog and the API-key box
//	                              at start (after the trust dialog)
//	PARTY_MOCK_GEMINI_PASTE_GUARD=40ms  gemini: an Enter this soon after a
//	                              paste (or 30ms after a typed key) is a newline
//	PARTY_MOCK_BANG=0             claude, codex: a leading ! is a prompt, not
//	                              a shell command
//	PARTY_MOCK_SLASH=0            claude, codex, gemini: a leading / is a
//	                              prompt, not a command (no panel, no
//	                              refusal, no /quit)
//	PARTY_MOCK_CLAUDE_EXIT=0      claude: a bare exit or quit is a prompt
//	PARTY_MOCK_BACKSLASH=0        claude, gemini: a trailing \ then Enter
//	                              submits (with the \)
//	PARTY_MOCK_GEMINI_INIT=0      gemini: no prompt until the start delay is
//	                              over (keys wait, then are read as usual)
//	PARTY_MOCK_CLAUDE_FIRST_PASTE=700ms  claude: the session's first paste
//	                              shows in the input only this late, an Enter
//	                              before finds the input empty (the real one:
//	                              > 0.5 s; off by default: party does not yet
//	                              wait for its text to show, relay_retry fails)
//	PARTY_MOCK_LINE_KILL=0        Ctrl-U clears all the input before the
//	                              cursor, not just its line
//
// Hooks are wired as with the real agents: claude reads the hooks of
// ~/.claude/settings.json, ./.claude/settings.json,
// ./.claude/settings.local.json and --settings FILE, and runs its command
// hooks with the real JSON on stdin. Every payload has session_id
// ($PARTY_MOCK_SESSION_ID, else a random UUID), transcript_path, cwd and
// hook_event_name; UserPromptSubmit {prompt, prompt_id}; Stop
// {last_assistant_message, stop_hook_active, prompt_id}; StopFailure
// {error (the fail step's type), last_assistant_message "API Error: …",
// prompt_id}, no error_type; PermissionRequest {tool_name, tool_input,
// permission_suggestions} when the permission dialog opens, then
// Notification {notification_type "permission_prompt", message "Claude
// needs your permission"}; SessionStart {source, model}. For write, run and
// permission its PreToolUse hooks (and PostToolUse after write and run)
// whose matcher selects the tool (Write, Bash) run: a PreToolUse hook that
// prints permissionDecision "deny" or exits 2 stops the tool, and the
// screen says so. No hook runs on an interrupt or a refused permission.
// claude also writes its session transcript where the real one does,
// $HOME/.claude/projects/<cwd with / as ->/<session_id>.jsonl (the
// payloads' transcript_path), from the first prompt on, with the records
// party reads: a user entry per prompt (the messages of a queued batch
// share one promptId); per model response (see Token usage) an assistant
// entry per content block, written when the response ends: a text block
// per say, then the tool_use of the write, run or permission that ended
// it, every one with the response's message.id, stop_reason and usage
// (so a reader must count a message id once); the tool's tool_result;
// the API error message (isApiErrorMessage) of fail, the refused
// tool_result ("The user doesn't want to proceed with this tool use. …",
// is_error) followed by "[Request interrupted by user for tool use]",
// "[Request interrupted by user]" on an Esc once the answer began (none
// before the first token, as in the real one; the text said so far goes
// first, as one "<synthetic>" entry with no usage), and a system
// turn_duration when a turn ends.
// Codex runs the program of -c notify=[...] with the turn's JSON as its
// last argument: type agent-turn-complete, thread-id and turn-id (UUIDs),
// cwd, client "codex-tui", input-messages (every user message of the
// thread so far), last-assistant-message; none after an error, a refused
// approval or an interrupt. Codex also writes its rollout transcript as
// 0.169 does (rollout.go): $CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl,
// made at the first prompt and held open, each record with its ordinal
// (0, 1, … in the file), with session_meta, task_started, turn_context
// (the turn's model), item_completed UserMessage, per model response its
// item_completed AgentMessage, the tool call that ended it (the approval's
// function_call with sandbox_permissions "require_escalated", a run's
// exec_command, a write's apply_patch) and its output, a
// token_usage_record and an event_msg token_count (see Token usage), then
// task_complete (last_agent_message, or error after fail) or turn_aborted
// (Esc, a refused approval).
// Gemini writes its chat file as 0.61 does (geminichat.go, the hooks'
// transcript_path): ~/.gemini/tmp/<working directory's name as a
// slug>/chats/session-<start, to the minute>-<first 8 of the session
// id>.jsonl, the session's metadata first, then a user record per prompt
// and a "gemini" record per model response, each followed by a $set of
// lastUpdated; a response that called a tool is written again, the same
// id, with its toolCalls once the tool is done, then the result as a user
// record.
//
// # Token usage
//
// The model answers a turn in responses: one up to each tool call (write,
// run, permission) and one after the last. Each carries token usage,
// recorded in the real agent's shape: by default 12 input tokens and, as
// output, a quarter of the bytes of what it said (at least 1), the rest 0;
// a usage step sets it for the response it is in, wherever in it (the
// fake model reads the same step). The counts are as the model's API
// reports them (docs of mockagents/fakemodel) and go into the fields the
// agent has:
//
//	claude  message.usage {input_tokens, cache_creation_input_tokens
//	        (cache_write), cache_read_input_tokens, output_tokens,
//	        server_tool_use, service_tier, cache_creation, inference_geo,
//	        iterations, speed}, message.model (claude-mock); no reasoning
//	codex   token_usage_record {thread_id, turn_id, session_id,
//	        root_turn_id, response_id, usage, turn_token_usage,
//	        thread_token_usage}, then event_msg token_count {info
//	        {total_token_usage, last_token_usage,
//	        last_usage_includes_reasoning, model_context_window},
//	        rate_limits} (after a tool call: once its output is in), each
//	        usage {input_tokens, cached_input_tokens (cache_read),
//	        cache_write_input_tokens, output_tokens,
//	        reasoning_output_tokens, total_tokens = input + output}; the
//	        model in turn_context (gpt-mock), written again when a
//	        response's model differs
//	gemini  tokens {input, output, cached (cache_read), thoughts
//	        (reasoning), tool (0), total = input + output + thoughts},
//	        model (gemini-mock); no cache-write count
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
//	                       groups ($0 the whole prompt), \n \t \\ escapes,
//	                       \xHH a byte (\x1b ESC, \xc2\x9b U+009B)
//	  echo                 print the prompt back verbatim
//	  flood SIZE           print SIZE (bytes, or 500KB, 50MB) of numbered lines
//	                       straight to the terminal, as fast as it takes them
//	  marker               print party's completion marker if the prompt asks for one
//	  write PATH TEXT      write a file (relative to the working directory)
//	  permission CMD       ask permission to run CMD; No ends the turn
//	  fail TYPE            end the turn with an API error (claude: StopFailure)
//	  usage KEY=N ...      the token usage of the model response this step is
//	                       in (see Token usage): input, output, cache_read,
//	                       cache_write, reasoning, each optional, and
//	                       model=NAME
//	  crash N              exit with status N at once
//	  hang                 stay busy forever
//	  freeze               end the turn, then hang as a wedged process does:
//	                       read no key, draw nothing, report no event
//
// The first rule that matches the submitted text runs. Without a script,
// or when no rule matches, the answer is: think 300ms, then one line
// quoting the start of the prompt. A script error names FILE:LINE:COL and
// the mock exits 2. The language is package mockagents/script's, which
// the fake model server (mockagents/fakemodel) reads too.
package mockagents
