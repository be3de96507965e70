// Upload options and readers live in @org/packager (ADR 0138); the checkContinue listener judges headers with them.
export {
  BUFFERED_BODY_BYTES,
  readAll,
  readForm,
  readJsonDocument,
  readOctets,
  uploadOptionsByPath,
  uploadOptionsFor,
} from '@org/packager';
export type { FormUpload } from '@org/packager';
