"""scikit-learn models converted with skl2onnx (float32 inputs).

Each builder returns (name, onnx ModelProto, description). Everything is seeded so
re-running produces the same weights. Used by generate_all.py.
"""
import numpy as np
from skl2onnx import convert_sklearn
from skl2onnx.common.data_types import FloatTensorType
from sklearn.cluster import KMeans
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_iris, make_classification, make_regression
from sklearn.linear_model import LinearRegression, LogisticRegression, SGDClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import Binarizer, Normalizer, StandardScaler

# Default domain opset 15, ai.onnx.ml opset 3: both inside the ranges onnxmini targets.
TARGET_OPSET = {"": 15, "ai.onnx.ml": 3}


def _convert(model, n_features, name, **options):
    onx = convert_sklearn(
        model,
        name=name,
        initial_types=[("input", FloatTensorType([None, n_features]))],
        target_opset=TARGET_OPSET,
        options={id(model): options} if options else None,
    )
    onx.doc_string = ""
    onx.producer_name = "onnxmini/models"
    return onx


def kmeans_dataset():
    x, _ = make_classification(n_samples=100000, n_features=20, random_state=0)
    return x.astype(np.float32)


def kmeans():
    x = kmeans_dataset()
    km = KMeans(n_clusters=8, max_iter=10, n_init=1, random_state=0).fit(x)
    return _convert(km, 20, "kmeans"), "KMeans(8 clusters) on make_classification(100000x20): label + distances"


def kmeans_batch():
    """1000 rows of the KMeans training set: the main job's default input batch."""
    return kmeans_dataset()[:1000].copy()


def _iris():
    x, y = load_iris(return_X_y=True)
    return x.astype(np.float32), y


def linear_regression():
    x, y = make_regression(n_samples=500, n_features=10, noise=0.5, random_state=0)
    lr = LinearRegression().fit(x.astype(np.float32), y)
    return _convert(lr, 10, "linear_regression"), "LinearRegression on make_regression(500x10)"


def linear_regression_multi():
    x, y = make_regression(n_samples=500, n_features=6, n_targets=3, noise=0.5, random_state=1)
    lr = LinearRegression().fit(x.astype(np.float32), y)
    return _convert(lr, 6, "linear_regression_multi"), "LinearRegression with 3 targets on make_regression(500x6)"


def logistic_regression():
    x, y = _iris()
    lr = LogisticRegression(max_iter=500, random_state=0).fit(x, y)
    return _convert(lr, 4, "logreg"), "multinomial LogisticRegression on iris, probabilities through ZipMap"


def logistic_regression_nozipmap():
    x, y = _iris()
    lr = LogisticRegression(max_iter=500, random_state=0).fit(x, y)
    return (_convert(lr, 4, "logreg", zipmap=False),
            "the same LogisticRegression as logistic_regression.onnx, probabilities as a tensor")


def logistic_regression_strings():
    x, y = _iris()
    names = np.array(load_iris().target_names)[y]
    lr = LogisticRegression(max_iter=500, random_state=0).fit(x, names)
    return (_convert(lr, 4, "logreg_strings", zipmap=False),
            "LogisticRegression on iris with string class labels (classlabels_strings)")


def logistic_regression_ovr_binary():
    x, y = _iris()
    lr = LogisticRegression(max_iter=500, random_state=0).fit(x, (y == 2).astype(np.int64))
    return (_convert(lr, 4, "logreg_binary", zipmap=False),
            "binary LogisticRegression on iris (class 2 vs rest): one coefficient row, LOGISTIC")


def sgd_classifier():
    x, y = _iris()
    sgd = SGDClassifier(max_iter=100, tol=None, random_state=0).fit(x, y)
    return _convert(sgd, 4, "sgd", zipmap=False), "SGDClassifier (hinge loss, one-vs-rest) on iris: label + raw scores"


def sgd_classifier_log():
    x, y = _iris()
    sgd = SGDClassifier(loss="log_loss", max_iter=100, tol=None, random_state=0).fit(x, y)
    return (_convert(sgd, 4, "sgd_log", zipmap=False),
            "SGDClassifier (log loss, one-vs-rest) on iris: LOGISTIC scores normalised with L1")


def scaler_logreg_pipeline():
    x, y = _iris()
    pipe = Pipeline([("scale", StandardScaler()), ("clf", LogisticRegression(max_iter=500, random_state=0))]).fit(x, y)
    return _convert(pipe, 4, "scaler_logreg"), "StandardScaler + LogisticRegression pipeline on iris (ZipMap output)"


def preprocess_pipeline():
    """Column selection (ArrayFeatureExtractor), Scaler, Binarizer, Normalizer, LinearRegressor."""
    x, y = _iris()
    pre = ColumnTransformer([
        ("scale", StandardScaler(), [0, 1]),
        ("bin", Binarizer(threshold=1.0), [2, 3]),
        ("norm", Normalizer(norm="l1"), [0, 2, 3]),
    ])
    pipe = Pipeline([("pre", pre), ("norm2", Normalizer(norm="l2")), ("reg", LinearRegression())]).fit(x, y.astype(np.float32))
    return _convert(pipe, 4, "preprocess"), "ColumnTransformer(StandardScaler, Binarizer, Normalizer L1) + Normalizer L2 + LinearRegression"


def normalizer_max():
    x, _ = _iris()
    norm = Normalizer(norm="max").fit(x)
    return _convert(norm, 4, "normalizer_max"), "sklearn Normalizer(norm='max')"


def mlp_classifier():
    x, y = _iris()
    mlp = MLPClassifier(hidden_layer_sizes=(16, 8), max_iter=2000, random_state=0).fit(x, y)
    return _convert(mlp, 4, "mlp", zipmap=False), "MLPClassifier (4-16-8-3, ReLU) on iris"


BUILDERS = [
    ("kmeans", kmeans),
    ("linear_regression", linear_regression),
    ("linear_regression_multi", linear_regression_multi),
    ("logistic_regression", logistic_regression),
    ("logistic_regression_nozipmap", logistic_regression_nozipmap),
    ("logistic_regression_strings", logistic_regression_strings),
    ("logistic_regression_binary", logistic_regression_ovr_binary),
    ("sgd_classifier", sgd_classifier),
    ("sgd_classifier_log", sgd_classifier_log),
    ("scaler_logreg_pipeline", scaler_logreg_pipeline),
    ("preprocess_pipeline", preprocess_pipeline),
    ("normalizer_max", normalizer_max),
    ("mlp_classifier", mlp_classifier),
]
