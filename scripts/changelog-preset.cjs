// The changelog preset of `lerna version --conventional-commits` (lerna.json):
// angular's, which reads `feat(scope): ...` and `fix: ...`, made to read this
// repository's own headers too (`runtime: ...`, `docs/how-to: ...`), whose
// prefix names the area changed. Those are listed under "Changes" with the
// area as scope; a `feat` bumps the minor version, a `BREAKING CHANGE:` note
// the major, anything else the patch.
"use strict";

const TYPES = "feat|fix|perf|revert|docs|style|refactor|test|build|ci|chore";
const MENTION = /@(?=[\w-])/g;
const AT = "\u0000at\u0000";

module.exports = async function createPreset(config) {
  const { default: angular } = await import("conventional-changelog-angular");
  const preset = await angular(config);
  const angularTransform = preset.writer.transform;
  return {
    ...preset,
    parser: {
      ...preset.parser,
      // `type(scope)!: subject` with a conventional type, else `area: subject` (an area of up to 80 characters).
      headerPattern: new RegExp(`^(?:(${TYPES})(?:\\(([^)]*)\\))?(!)?|([^:\\n]{1,80}?)): (.*)$`),
      headerCorrespondence: ["type", "scope", "breaking", "area", "subject"],
    },
    writer: {
      ...preset.writer,
      transform: (commit, context) => {
        // Angular links `@name` to a GitHub user; here `@` starts a package's scope (`@tessera/cli`).
        const shielded = { ...commit, subject: commit.subject?.replace(MENTION, AT) };
        const formatted = commit.type
          ? angularTransform(shielded, context)
          : commit.area
            ? // Angular's formatting (hash, references), under a section of its own.
              angularTransform({ ...shielded, type: "feat", scope: commit.area }, context)
            : undefined;
        if (!formatted) return formatted;
        return {
          ...formatted,
          ...(commit.type ? {} : { type: "Changes" }),
          subject: formatted.subject?.replaceAll(AT, "@"),
        };
      },
    },
  };
};
