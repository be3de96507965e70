// Accept negotiation lives in @org/packager (ADR 0138); the routes set `Vary` from each operation's headers.
export { JSON_TYPE, OCTET_STREAM, TEXT_PLAIN, negotiate } from '@org/packager';
