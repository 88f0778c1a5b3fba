# node and npm: `npm test` of a local package (a module, os.tmpdir(), a
# child process).  $1: the workspace.
cd "$1"
mkdir -p proj/lib proj/test
cd proj
cat >package.json <<'JSON'
{
  "name": "tc-npm",
  "version": "1.0.0",
  "private": true,
  "scripts": { "test": "node test/run.js" }
}
JSON
echo 'module.exports = (a, b) => a + b;' >lib/add.js
cat >test/run.js <<'JS'
const assert = require('assert');
const fs = require('fs'), os = require('os'), path = require('path');
const { execFileSync } = require('child_process');
const add = require('../lib/add');
assert.strictEqual(add(2, 3), 5);
const d = fs.mkdtempSync(path.join(os.tmpdir(), 'tc-'));
fs.writeFileSync(path.join(d, 'x'), 'y');
assert.strictEqual(fs.readFileSync(path.join(d, 'x'), 'utf8'), 'y');
fs.rmSync(d, { recursive: true });
assert.strictEqual(execFileSync('node', ['-e', 'process.stdout.write(String(6 * 7))']).toString(), '42');
console.log('npm test ok');
JS
npm test >../npm.out 2>&1 || { cat ../npm.out; exit 1; }
grep -q 'npm test ok' ../npm.out
