// Package mcp is party as a Model Context Protocol server (party mcp): an
// agent holds party's operations as tools of its own instead of typing
// party commands into its shell.
//
// Its parts:
//
//   - Ops (ops.go): the narrow interface of party's operations the tools
//     call — the supervisor's inbox, triggers, runtimes and heartbeat,
//     talk, the team's tasks — and the error code of a failure. core/party
//     implements it (core/party/mcp.go) over the supervisor's API client,
//     as the caller the process was started as: the runtime of its
//     runtime token, else the operator. No tool takes an identity in its
//     arguments.
//   - the tools (tools.go): each one's arguments and typed result, whose
//     JSON schemas the SDK derives from the Go types, and the handler
//     that calls Ops.
//   - the server (server.go): NewServer registers the tools on the
//     official Go SDK's server; Serve runs it on a transport (stdio for
//     party mcp) until the client goes, and returns only once every call
//     in flight has ended (a talk cancelled by the client's going is
//     taken back before the process exits).
//   - errors: a failure is a tool error (isError) whose text is party's
//     --json error, {"error":{"code":…,"message":…}}, with the code of the
//     one error table (Ops.Code); arguments that fail a tool's schema are
//     USAGE. The same object is the error's structured content, which
//     each tool's output schema allows besides its result (outputSchema):
//     Gemini CLI checks an error's against it. An unknown tool is the
//     protocol's own error (invalid params).
//   - progress (progress.go): a long call (talk, trigger with wait) whose
//     client gave a progress token gets a notification when it starts
//     waiting and every ProgressEvery after, until it ends.
//   - over HTTP (http.go): HTTP serves the tools over the SDK's
//     streamable HTTP handler, each session by the Server of the identity
//     of its bearer token (Identity: the operator's token, or a runtime's),
//     which HTTPOptions.Verify says (Verify, verify.go: the operator's, a
//     named operator's, else a runtime's of the session's record); on a
//     unix socket no token is the operator. A session's later requests
//     must carry the same identity.
//   - named operators (operators.go): Operators keeps the SHA-256 of the
//     token of each named operator identity of a session (party mcp
//     token), an orchestrator outside the team acting as the operator
//     under its own name.
//   - install (install.go): Installer registers the server in an agent's
//     own user configuration for an agent started by hand (party mcp
//     install and uninstall): claude through its CLI, codex by a table
//     appended to config.toml that codex reads back, gemini by a merge of
//     its settings (hook.GeminiMCPInstall); a server named party of
//     another command is ErrTaken unless forced.
package mcp
