# HOME-based dotfiles (git config --global, a cache) work and do not land in
# the workspace, which the agent commits.  $1: the workspace.
cd "$1"
case "$HOME" in
"$1" | "$1"/*) echo "HOME=$HOME is in the workspace $1"; exit 1 ;;
esac
[ -d "$HOME" ] || { echo "HOME=$HOME is not a directory"; exit 1; }
git config --global user.name "Agent Home"
git config --global init.defaultBranch trunk
[ "$(git config --global user.name)" = "Agent Home" ]
mkdir -p "$HOME/.cache/tc"
echo cached >"$HOME/.cache/tc/f"
git init -q proj
[ "$(git -C proj symbolic-ref HEAD)" = refs/heads/trunk ]
echo "$HOME" >home.txt
