// Expands version 2 viewer documents with the page's own expand.js (node, for tests/view/test_expand.py):
// node expand_node.js EXPAND_JS DOCS.json -> the version 1 documents, as one JSON array on stdout.
"use strict";
const fs = require("fs");
const expand = require(process.argv[2]);
const docs = JSON.parse(fs.readFileSync(process.argv[3], "utf-8"));
process.stdout.write(JSON.stringify(docs.map((d) => expand.expand(d))));
