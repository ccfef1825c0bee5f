// Package fakemodel is a local model server that lets the REAL agents run
// offline: one HTTP server on 127.0.0.1 that speaks, streaming, the
// Anthropic Messages API (Claude Code), the OpenAI Responses API (Codex CLI)
// and the Gemini API (Gemini CLI), and answers as a mock agent script says
// (the script language of the mock agents, package mockagents/script), so
// one script drives a mock and a real agent alike.
//
// # Endpoints
//
//	HEAD /, GET /                                   liveness (Claude probes it)
//	POST /v1/messages[?beta=true]                   Anthropic, SSE or JSON
//	POST /v1/messages/count_tokens                  Anthropic token count
//	POST /v1/responses                              OpenAI Responses, SSE
//	POST /v1beta/models/M:streamGenerateContent     Gemini, SSE (?alt=sse)
//	POST /v1beta/models/M:generateContent           Gemini, JSON
//	POST /v1beta/models/M:countTokens               Gemini token count
//	GET  /v1beta/models[/M]                         Gemini model list
//	PUT  /fakemodel/script                          replace the script
//
// # Script steps on the wire
//
// A request's new user text is matched against the script's rules like a
// mock agent's submission. The text of an earlier turn that got no answer
// (failed, crashed, hung) is history, not new, when the agent sends it
// again in front of a new text: Claude keeps it in the conversation and
// merges its next text (or a resumed session's prompt) into the same user
// message. The last text of a request is always new. think waits before the next piece; say, echo and
// marker stream answer text (marker only when the prompt asks for party's
// completion marker); fail N with a 3-digit N answers that HTTP status
// before any byte, and fail WORD (or fail N once text was streamed) ends the
// stream with an error event; permission CMD and run CMD ask for the
// agent's shell tool (Claude Bash tool_use, Codex exec_command with
// require_escalated, Gemini run_shell_command), which opens the agent's
// permission dialog; the steps after it run when the tool's result comes
// back; hang keeps the stream open without a byte more; crash drops the
// connection. With no script, or when no rule matches, the answer is a
// short line quoting the prompt, plus the marker when asked for one.
//
// # Token usage
//
// Every answer that ends (normally, or asking for a tool) carries token
// usage in its API's fields: by default 12 input tokens and, as output, a
// quarter of the answer text's bytes (at least 1). A usage step (usage
// input=N output=N cache_read=N cache_write=N reasoning=N model=NAME,
// each optional) sets them for the answer it is in, wherever in it; the
// steps after a tool call are the next answer, with its own. The counts
// go on the wire as they are, into the fields the API has:
//
//	Anthropic usage       input_tokens, cache_read_input_tokens,
//	                      cache_creation_input_tokens (cache_write) in
//	                      message_start and message_delta, output_tokens
//	                      in message_delta (1 in message_start); no
//	                      reasoning field
//	OpenAI usage          input_tokens, input_tokens_details.cached_tokens
//	                      (cache_read), .cache_write_tokens, output_tokens,
//	                      output_tokens_details.reasoning_tokens,
//	                      total_tokens = input + output (the API counts
//	                      cached input in input, reasoning in output)
//	Gemini usageMetadata  promptTokenCount (input), cachedContentTokenCount
//	                      (cache_read), candidatesTokenCount (output),
//	                      thoughtsTokenCount (reasoning), totalTokenCount
//	                      = input + output + reasoning; no cache-write field
//
// model names the answer's model (Anthropic message.model, OpenAI
// response.model, Gemini modelVersion); without it, the model the request
// asked for.
//
// Side requests are answered at once and never matched: Claude's title
// request, Codex's title thread, Gemini's router and next-speaker
// classifiers (any request that asks for JSON output).
//
// # Log
//
// Every request is logged to LogPath in the mock log's JSON-lines format
// (mocklog.Entry): agent is the API's agent (claude, codex, gemini),
// seq the request number, text the user's text byte-exact as the agent sent
// it. mode is submit for a user submission, side for a side request, and
// continue for a request that only carries a tool's result. A request that
// carries several new user texts (Claude sends the messages queued during a
// turn together) is logged as one line per text, with the same seq (the history texts above are not logged again). A text
// the user typed while one of Claude's tools ran reaches the model only as
// a note with that tool's result ("The user sent a new message while you
// were working: …", several in one message): each is logged with mode
// queued, and the turn's remaining steps run first, then for each text the
// steps of the rule it matches, in the same answer, as a model that heeds
// the notes would.
//
// With UsageLogPath, every answer that carried usage is also logged there,
// one JSON line each (UsageEntry): agent, the request's seq and mode (side
// marks a side request's answer), model and usage {input, output,
// cache_read, cache_write, reasoning}, the counts the wire carried (those
// the API has no field for are 0). A failed, hung or crashed answer
// carried none and is not logged. ConversationUsage sums what an agent's
// conversation got: every answer but the side requests'.
//
// The script file is read again whenever it changes, so a scenario changes
// the behaviour by rewriting it (or with PUT /fakemodel/script).
package fakemodel
