# git: a fresh_overlay workspace laid out from a git repository at a pinned
# commit, worked on as a clone.  $1: the workspace.
cd "$1"
git rev-parse HEAD
git status --porcelain | wc -l
cat README
test ! -e later.txt && echo no-later
stat -c 'owner %u' a/b.txt
git config user.name Agent
git config user.email agent@example.org
printf 'from the agent\n' >>README
echo new >new.txt
git add new.txt
git commit -q -am "agent change"
git log --oneline | wc -l
