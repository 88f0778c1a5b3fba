# Attack: change a read-only input repository (owned by the run's uid, so
# only tether stands in the way): git push into it, write a ref directly.
# What succeeded goes to "did".  $1: the workspace, $2: the input.
cd "$1"
git clone -q "$2" work
cd work
git config user.name Agent
git config user.email agent@example.org
echo change >>README
git commit -q -am change
git push -q origin HEAD:main 2>>../push.err && echo "pushed main" >>../did || true
git push -q origin HEAD:refs/heads/evil 2>>../push.err && echo "pushed evil" >>../did || true
(git rev-parse HEAD >"$2/refs/heads/main") 2>/dev/null && echo "wrote refs/heads/main" >>../did || true
(echo x >"$2/hooks/post-update") 2>/dev/null && echo "wrote a hook" >>../did || true
exit 0
