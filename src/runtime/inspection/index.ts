export * from './stageEvents.js';
export * from './observeStages.js';
export * from './stageRouter.js';
export * from './inspectionEvents.js';
export * from './inspectorPayload.js';
export * from './stateValuePath.js';
