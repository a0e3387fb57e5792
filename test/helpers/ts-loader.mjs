// `node --import ./test/helpers/ts-loader.mjs file.test.ts`: runs a TypeScript test (see ts-hooks.mjs).
import { register } from 'node:module'

register('./ts-hooks.mjs', import.meta.url)
