// vitest >= 4 does not read this file itself; vitest.config.ts passes it on as `test.projects`.
export default ['packages/*', 'apps/*', 'tools/*'];
