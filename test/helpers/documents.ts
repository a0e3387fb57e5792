// The generators live with the benchmarks (plain JavaScript), so both use the same documents.
export { makePdf, makePng } from '../../bench/lib/documents.js'
