/**
 * A model whose requests are told to telemetry: when each `doStream` request starts and when its
 * stream ends. The log says what a step asked and got; only the request itself knows when it was
 * sent and when its stream closed. Everything else is passed through untouched. Browser-safe.
 */
import type { LanguageModelV3, LanguageModelV3StreamPart } from '@ai-sdk/provider';

/** One model request as it goes. */
export interface ModelRequestWatch {
  /** The stream ended (its last part was read), or failed. */
  ended(): void;
}

/** Told when a request of the model starts; returns who hears the rest of it (or nothing). */
export type ModelRequestListener = (model: { readonly provider: string; readonly modelId: string }) => ModelRequestWatch | undefined;

const OBSERVED = Symbol('dsh.observedModel');

/** `model`, with every `doStream` request told to `listener` (a model already observed by it is returned as is). */
export function observeModel(model: LanguageModelV3, listener: ModelRequestListener): LanguageModelV3 {
  if ((model as { [OBSERVED]?: ModelRequestListener })[OBSERVED] === listener) return model;
  const observed: LanguageModelV3 & { [OBSERVED]: ModelRequestListener } = {
    specificationVersion: model.specificationVersion,
    provider: model.provider,
    modelId: model.modelId,
    get supportedUrls() {
      return model.supportedUrls;
    },
    doGenerate: (options) => model.doGenerate(options),
    doStream: async (options) => {
      const watch = listener({ provider: model.provider, modelId: model.modelId });
      if (!watch) return model.doStream(options);
      let response;
      try {
        response = await model.doStream(options);
      } catch (e) {
        watch.ended();
        throw e;
      }
      let done = false;
      const end = () => {
        if (done) return;
        done = true;
        watch.ended();
      };
      // The reader's reads are watched (dsh's step reads the stream with getReader): a TransformStream
      // in between would cost a write and a read per part, and a response has a part per call.
      const stream = response.stream;
      const getReader = stream.getReader.bind(stream) as () => ReadableStreamDefaultReader<LanguageModelV3StreamPart>;
      Object.defineProperty(stream, 'getReader', {
        configurable: true,
        value: () => {
          const reader = getReader();
          const read = reader.read.bind(reader);
          reader.read = () =>
            read().then(
              (r) => {
                if (r.done || r.value.type === 'finish' || r.value.type === 'error') end();
                return r;
              },
              (e: unknown) => {
                end();
                throw e;
              },
            );
          return reader;
        },
      });
      return { ...response, stream };
    },
    [OBSERVED]: listener,
  };
  return observed;
}
