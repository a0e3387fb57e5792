import t from 'tap'
import { SERVER_PATH, withoutServerPaths } from '../../src/services/server-paths.js'

// docs/errors.md: a tool answer shows no absolute path of the server. Messages from below pass through this.

t.test('named paths become their names, the longest first; any other absolute path the placeholder; URLs and relative paths stay', async (t) => {
  const named: Array<[string, string]> = [['/srv/state', 'the state folder'], ['/srv/state/index-1.sqlite', 'the index file']]

  t.equal(withoutServerPaths("EACCES: permission denied, open '/srv/state/index-1.sqlite-wal'", named), "EACCES: permission denied, open 'the index file-wal'")
  t.equal(withoutServerPaths('cannot write /srv/state: disk full', named), 'cannot write the state folder: disk full')
  t.equal(withoutServerPaths('/usr/bin/git does not run (see /root/.gitconfig)'), `${SERVER_PATH} does not run (see ${SERVER_PATH})`)
  t.equal(withoutServerPaths('path=/tmp/x "/a b" src/app.ts http://host:8080/v1/embed I/O error'), `path=${SERVER_PATH} "${SERVER_PATH} b" src/app.ts http://host:8080/v1/embed I/O error`)
  t.equal(withoutServerPaths('at /x', [], '[elsewhere]'), 'at [elsewhere]')
  t.equal(withoutServerPaths('rg: /etc/x: denied, see /var/log/y. Then / and a/b.'), `rg: ${SERVER_PATH}: denied, see ${SERVER_PATH}. Then / and a/b.`, 'the sentence keeps its punctuation')
})
