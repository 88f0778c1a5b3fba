# git: pre-commit and commit-msg hooks, executables in the workspace.
# $1: the workspace.
cd "$1"
git init -q -b main proj
cd proj
git config user.name Agent
git config user.email agent@example.org
cat >.git/hooks/pre-commit <<'HOOK'
#!/bin/sh
echo "pre-commit ran" >>../hooks.log
HOOK
cat >.git/hooks/commit-msg <<'HOOK'
#!/bin/sh
grep -q '^feat: ' "$1" || { echo "commit-msg: wants feat:" >&2; exit 1; }
echo "commit-msg ran" >>../hooks.log
HOOK
chmod +x .git/hooks/pre-commit .git/hooks/commit-msg
echo x >f
git add f
git commit -q -m "feat: first"
# The commit-msg hook must refuse this one.
echo y >>f
if git commit -q -am "no prefix" 2>/dev/null; then echo "the hook did not refuse" >&2; exit 1; fi
git log --oneline >../log.txt
