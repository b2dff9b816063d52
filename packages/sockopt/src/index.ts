export type { BufferSizes } from './buffer-sizes';
export { getBufferSizes, setBufferSizes, socketFd, sockoptAvailable } from './buffer-sizes';
