package task

import _ "embed"

// Instructions tells an agent the party pm commands, in Markdown short
// enough for a preamble; party instructions ends its texts with it.
//
//go:embed instructions.md
var Instructions string
