// npm publish's last gate (prepublishOnly): SECURITY.md sends reporters to the repository's private
// vulnerability reporting, so a package that does not say where its repository is must not go public.
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const REQUIRED = {
  repository: pkg => pkg.repository?.url ?? (typeof pkg.repository === 'string' ? pkg.repository : undefined),
  bugs: pkg => pkg.bugs?.url ?? (typeof pkg.bugs === 'string' ? pkg.bugs : undefined),
  homepage: pkg => pkg.homepage
}

/** The package.json fields a published package needs and lacks (a URL each), by name. */
export function missingPublishFields (pkg) {
  return Object.entries(REQUIRED)
    .filter(([, read]) => !/^(git\+)?https:\/\/\S+$/.test(read(pkg) ?? ''))
    .map(([field]) => field)
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const missing = missingPublishFields(JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')))
  if (missing.length > 0) {
    process.stderr.write(`workspace-mcp: not publishing: package.json needs ${missing.join(', ')} (an https URL each): ` +
      'SECURITY.md sends vulnerability reports to the repository\'s private reporting\n')
    process.exit(1)
  }
}
