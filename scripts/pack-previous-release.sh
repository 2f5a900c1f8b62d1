#!/usr/bin/env bash
# Packs the npm tarballs of a release of Creek into packages/server/test/fixtures/previous-release,
# where the upgrade test (packages/server/test/node/upgrade.e2e.test.ts, "an upgrade from the
# previous release") runs a cluster on them and upgrades it to the checkout's build. Run it when a
# release is cut, with the tag of the release before the one being developed.
#
# usage: scripts/pack-previous-release.sh REF     (a release tag, or a commit)
#
# The test runs the tarballs with this checkout's third-party dependencies, so the release's
# package-lock.json must equal this checkout's; the script refuses otherwise.
set -euo pipefail
ref=${1:?usage: scripts/pack-previous-release.sh REF (a release tag, or a commit)}
cd "$(dirname "$0")/.."
commit=$(git rev-parse --verify --quiet "$ref^{commit}") || {
  echo "pack-previous-release: '$ref' names no commit of this repository" >&2
  exit 2
}
if ! git diff --quiet "$commit" HEAD -- package-lock.json; then
  echo "pack-previous-release: $ref's package-lock.json differs from this checkout's; the upgrade test runs the release with this checkout's dependencies" >&2
  exit 1
fi
out=$PWD/packages/server/test/fixtures/previous-release
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/tree" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git worktree add --detach --quiet "$tmp/tree" "$commit"
echo "== npm ci at $commit (it builds the packages)"
(cd "$tmp/tree" && npm ci --prefer-offline --no-audit --no-fund >/dev/null)
rm -rf "$out"
mkdir -p "$out"
echo "== npm pack"
(cd "$tmp/tree" && npm pack --silent --pack-destination "$out" \
  -w packages/app -w packages/protocol -w packages/replica -w packages/client -w packages/server >/dev/null)
limits=$tmp/tree/packages/protocol/dist/limits.js
peer=$(node --input-type=module -e "const m = await import('$limits'); console.log(m.PEER_PROTOCOL_VERSION)")
client=$(node --input-type=module -e "const m = await import('$limits'); console.log(m.PROTOCOL_VERSION)")
cat >"$out/SOURCE.md" <<SOURCE
# The previous release

The npm tarballs of \`@creek/app\`, \`@creek/protocol\`, \`@creek/replica\`, \`@creek/client\` and
\`@creek/server\` at commit $commit ($ref), packed by \`scripts/pack-previous-release.sh $ref\`.
It speaks peer protocol version $peer (its newest) and client protocol version $client. The upgrade
test (\`packages/server/test/node/upgrade.e2e.test.ts\`) starts a cluster on them and upgrades it
to the checkout's build replica by replica.
SOURCE
npx prettier --write "$out/SOURCE.md" >/dev/null
ls -l "$out"
