import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

function findPackageRoot (): string {
  // Works from src/ (tests) and from dist/src/ (the built bin).
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir)
    // The module always ships inside the package (source tree or bundle): reaching / is a broken install.
    /* c8 ignore next */
    if (parent === dir) throw new Error('package.json not found above ' + fileURLToPath(import.meta.url))
    dir = parent
  }
  return dir
}

/** Absolute path of the installed package (where package.json and docs/ live). */
export const PACKAGE_ROOT = findPackageRoot()

/** name and version from package.json. */
export const PACKAGE = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { name: string, version: string }
