// Package hook turns the completion hooks of the agents into party events:
// Claude Code's hook JSON (Stop, StopFailure, UserPromptSubmit,
// Notification, SessionStart, PreToolUse, PostToolUse) and Gemini's on
// stdin, and Codex's notify JSON as the last argv element; Record appends
// them to their session's event log (party hook); one it cannot append
// is reported to the session's waiters and noted for later ones
// (Unheard, unheard.go). It also builds the
// launch arguments and settings (InstallClaude) that wire those hooks to
// "party hook", and puts them into a folder's Gemini settings and takes
// them out again when the session stops (GeminiWiring, gemini_wire.go),
// with party's MCP server and the variables Gemini must let through to
// it (MergeGeminiMCP, RemoveGeminiMCP, gemini_mcp.go).
package hook
