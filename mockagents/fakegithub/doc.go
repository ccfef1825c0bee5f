// Package fakegithub is a local GitHub REST API for the REAL gh CLI, so
// that party's GitHub task store is proven with the gh a user runs, offline:
// one HTTPS server on 127.0.0.1 with a certificate authority made in the
// process, which keeps repositories' issues, labels, milestones and comments
// in memory.
//
// # Pointing gh at it
//
// gh treats any GH_HOST other than github.com as a GitHub Enterprise
// Server and talks to https://GH_HOST/api/v3/; a host with a port
// (127.0.0.1:PORT) is kept whole. Server.Env gives gh's environment:
//
//	GH_HOST=127.0.0.1:PORT
//	GH_ENTERPRISE_TOKEN=<the server's token>
//	SSL_CERT_FILE=<the CA's PEM file>     Go's TLS (gh's) trusts only it
//	GH_CONFIG_DIR=<a directory of its own> no hosts.yml of the developer
//	GH_NO_UPDATE_NOTIFIER=1, GH_PROMPT_DISABLED=1
//
// A request whose token is not the server's is answered 401 Bad
// credentials, as GitHub does; Stop closes the listener (gh then fails with
// "connection refused", the offline case) and Resume listens again on the
// same address, with the same contents.
//
// # Endpoints
//
// Under /api/v3, in GitHub's JSON shapes (the fields party and gh read):
//
//	GET  /user                                     the token's user
//	GET  /repos/O/R                                 the repository
//	GET  /repos/O/R/issues                          ?state=open|closed|all &labels=a,b
//	                                                &milestone=N|*|none &since=T
//	                                                &sort=created|updated &direction
//	POST /repos/O/R/issues                          {title, body, labels, milestone, assignees}
//	GET|PATCH /repos/O/R/issues/N                   PATCH: any of title, body, state,
//	                                                state_reason, labels, milestone (null
//	                                                clears), assignees
//	GET|POST /repos/O/R/issues/N/comments           {body}
//	GET  /repos/O/R/issues/comments                 every comment of the repository, ?since=T
//	GET|POST|PUT|DELETE /repos/O/R/issues/N/labels  add ({labels}), replace, remove all
//	DELETE /repos/O/R/issues/N/labels/NAME
//	GET|POST /repos/O/R/labels                      {name, color, description}
//	GET|PATCH|DELETE /repos/O/R/labels/NAME
//	GET|POST /repos/O/R/milestones                  ?state=open|closed|all; {title, state,
//	                                                description}
//	GET|PATCH|DELETE /repos/O/R/milestones/N
//
// Requests are routed, refused and paginated in api.go, answered in
// issues.go, comments.go, labels.go and milestones.go, in the JSON of
// json.go; the repositories they change are model.go's.
//
// Lists are paginated like GitHub's (per_page, default 30, at most 100;
// page; a Link header with rel="next" and rel="last"), so gh api
// --paginate walks them. Labels an issue names that do not exist are
// created (color ededed), as GitHub does. A milestone title that exists
// already is 422 already_exists. Every repository exists unless
// Options.Repos names the only ones that do (then others are 404).
//
// Every write stamps the (milestone's, comment's) updated_at; the
// server's clock moves at least a second per write, so two writes never
// share an updated_at even though GitHub's times have second precision.
//
// # Behind party's back
//
// Edit changes an issue as a person on github.com would (title, body,
// state, labels, milestone, assignees, a comment by "someone-on-github";
// mycomment is one by the token's own user), stamping updated_at;
// EditBeforeWrite does it just before the next write request is answered
// (between a client's read and its write);
// Issue, Comments, Labels and Milestones read the contents back for
// oracles (edit.go, contents.go).
//
// # Log
//
// Every request is logged to Options.LogPath as one JSON line: seq,
// method, path (with its query), status, and body (the request's JSON, or
// a string when it is not JSON). A rejected token is logged too (log.go).
package fakegithub
