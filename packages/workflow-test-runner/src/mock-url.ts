/** The host name every mocked endpoint lives on (docs/interfaces.md §7.1: tests use `http://mockserver`). */
export const MOCK_HOSTNAME = 'mockserver';

/** True when `url` parses and its host is the mock host (any scheme of http/https, any port). */
export function isMockUrl(url: URL): boolean {
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname === MOCK_HOSTNAME;
}
