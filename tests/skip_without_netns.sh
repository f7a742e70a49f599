# Sourced by the simnet tests: exit 77 (ctest: skipped) where network namespaces cannot be made
# (an unprivileged container).
probe="simnet-probe$$"
if ! ip netns add "$probe" 2>/dev/null; then
  echo "network namespaces not available here: skipped"
  exit 77
fi
ip netns del "$probe"
