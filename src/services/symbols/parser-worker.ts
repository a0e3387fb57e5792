import { serveAs } from '../threads/index.js'
import { parserHandler } from './parse-handler.js'

serveAs('parser-worker', parserHandler)
