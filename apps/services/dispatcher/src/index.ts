export { Dispatcher } from './dispatcher.ts';
