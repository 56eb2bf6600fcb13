export * from './stageEvents.js';
export * from './stageStream.js';
export * from './inspectionEvents.js';
export * from './inspectorPayload.js';
export * from './stateValuePath.js';
