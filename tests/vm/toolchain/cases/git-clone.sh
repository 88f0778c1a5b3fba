# git: clone of a read-only input repository, then work on the clone.
# $1: the workspace, $2: the input repository.
cd "$1"
# The input is root's: git wants to be told that it may read it, in the
# way its message says (git 2.39 takes safe.directory from the global or
# system configuration only).
git config --global --add safe.directory "$2"
git clone -q "$2" work
cd work
git config user.name Agent
git config user.email agent@example.org
printf 'from the agent\n' >>README
git commit -q -am "agent change"
git log --oneline >../log.txt
git status -sb | head -n 1 >../branch.txt
git diff origin/main --stat >../diffstat.txt
