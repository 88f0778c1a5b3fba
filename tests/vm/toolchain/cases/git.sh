# git: init, commit, branch, status, diff, merge.  $1: the workspace.
cd "$1"
git init -q -b main proj
cd proj
git config user.name Agent
git config user.email agent@example.org
printf 'one\n' >a.txt
git add a.txt
git commit -q -m first
git checkout -q -b feature
printf 'two\n' >>a.txt
git status --porcelain >../status-dirty.txt
git diff --stat >../diffstat.txt
git commit -q -am second
git checkout -q main
git merge -q --ff-only feature
git diff HEAD~1 --name-only >../changed.txt
git branch --list >../branches.txt
git log --oneline >../log.txt
git status --porcelain >../status-clean.txt
git gc -q
git fsck --no-progress --strict
