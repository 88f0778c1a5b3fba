# git: clone of a read-only input repository, then work on the clone.
# $1: the workspace, $2: the input repository.
cd "$1"
# The input is root's, which git accepts only when its global configuration
# lists it under safe.directory: tether's HOME/.gitconfig for the run does
# (an input with a digest is a copy of the run's uid's and needs nothing).
git clone -q "$2" work
cd work
git config user.name Agent
git config user.email agent@example.org
printf 'from the agent\n' >>README
git commit -q -am "agent change"
git log --oneline >../log.txt
git status -sb | head -n 1 >../branch.txt
git diff origin/main --stat >../diffstat.txt
